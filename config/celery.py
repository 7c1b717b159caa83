"""The Celery application. Tasks are discovered in each app's tasks.py."""

import os

from celery import Celery

# Whether this process was given a settings module; config.stack passes on only one it was given,
# so that each child picks its own default (manage.py's, pytest's).
SETTINGS_MODULE_GIVEN = "DJANGO_SETTINGS_MODULE" in os.environ
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("wellchosen")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
