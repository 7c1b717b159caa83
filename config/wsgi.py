import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()

# Import the URLconf (and with it the admin and every view) now, at start-up, rather than on
# the first request a worker serves: that first annotator would otherwise wait seconds.
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018 (the access imports the URLconf)
