"""Production: secrets and hosts must come from the environment; nothing insecure is defaulted."""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .env import env_bool, env_int

# Never on here: a debug page shows settings, source and request data to whoever causes an error.
# DJANGO_DEBUG is refused rather than ignored, so that no one believes it took effect.
if env_bool("DJANGO_DEBUG", False):
    raise ImproperlyConfigured("DJANGO_DEBUG cannot be on under config.settings.production; use config.settings.local")
DEBUG = False
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY or SECRET_KEY.startswith("insecure"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a long random value in production")

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# HSTS for a year (what browsers' preload lists ask for), with subdomains: the header covers the
# names under the host that sends it (for wellchosen.example.org, *.wellchosen.example.org), not
# its siblings; set DJANGO_HSTS_INCLUDE_SUBDOMAINS=0 only when the site is served at a bare domain
# whose other subdomains still need plain http. Preloading is off: it binds the whole registrable
# domain for months and only its owner can ask for it, so Django's reminder (W021) is silenced.
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
