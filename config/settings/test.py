"""Test settings. The database comes from DATABASE_URL (PostgreSQL pass) or SQLite."""

import os
import tempfile

from .base import *  # noqa: F403
from .base import DATABASES, WELLCHOSEN_DATA_DIR

SECRET_KEY = "test-secret-key"
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Each test process gets its own data directory so uploads and caches never leak
# between runs (or between the SQLite and PostgreSQL passes).
WELLCHOSEN_DATA_DIR = WELLCHOSEN_DATA_DIR.__class__(
    os.environ.get("WELLCHOSEN_DATA_DIR") or tempfile.mkdtemp(prefix="wellchosen-test-")
)
WELLCHOSEN_UPLOAD_DIR = WELLCHOSEN_DATA_DIR / "uploads"

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory: the end-to-end job test starts a real Celery worker process
    # that must see the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(WELLCHOSEN_DATA_DIR / "test.sqlite3")}

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = "memory://"
CELERY_BROKER_TRANSPORT_OPTIONS = {}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
