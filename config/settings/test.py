"""Test settings. The database comes from DATABASE_URL (PostgreSQL pass) or SQLite."""

import atexit
import os
import shutil
import tempfile

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES, WELLCHOSEN_DATA_DIR

SECRET_KEY = "test-secret-key"
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Each test process gets its own data directory so uploads and caches never leak
# between runs (or between the SQLite and PostgreSQL passes).
if os.environ.get("WELLCHOSEN_DATA_DIR"):
    WELLCHOSEN_DATA_DIR = WELLCHOSEN_DATA_DIR.__class__(os.environ["WELLCHOSEN_DATA_DIR"])
else:
    WELLCHOSEN_DATA_DIR = WELLCHOSEN_DATA_DIR.__class__(tempfile.mkdtemp(prefix="wellchosen-test-"))
    atexit.register(shutil.rmtree, WELLCHOSEN_DATA_DIR, ignore_errors=True)
WELLCHOSEN_UPLOAD_DIR = WELLCHOSEN_DATA_DIR / "uploads"
# Exported ONNX models are kept between test runs (and between the SQLite and PostgreSQL passes).
WELLCHOSEN_MODEL_CACHE_DIR = str(BASE_DIR / "var" / "test-model-cache")
STATIC_ROOT = WELLCHOSEN_DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory: the end-to-end job test starts a real Celery worker process
    # that must see the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(WELLCHOSEN_DATA_DIR / "test.sqlite3")}

# the plugin systems of the tests
WELLCHOSEN_PLUGINS = ["tests.evaluation.plugins.*", "tests.evaluation.generation_support.*"]

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if os.environ.get("WELLCHOSEN_TEST_CACHE_URL"):
    # Worker processes started by a test share its Redis cache (job progress and heartbeats
    # cross processes there, as with REDIS_CACHE_URL when deployed), under the test's own prefix.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["WELLCHOSEN_TEST_CACHE_URL"],
            "KEY_PREFIX": os.environ.get("WELLCHOSEN_TEST_CACHE_PREFIX", ""),
        }
    }
# Tests run tasks in-process unless told otherwise; the end-to-end test starts a real
# worker process with CELERY_TASK_ALWAYS_EAGER=0 and a Redis broker.
CELERY_TASK_ALWAYS_EAGER = os.environ.get("CELERY_TASK_ALWAYS_EAGER", "1") == "1"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "memory://")
if not CELERY_BROKER_URL.startswith("filesystem://"):
    # Worker processes started by a test may keep their queues under a key prefix of their own,
    # so that they consume the deployed queue names beside other test runs on the same Redis.
    _prefix = os.environ.get("WELLCHOSEN_TEST_BROKER_PREFIX", "")
    CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": _prefix} if _prefix else {}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
