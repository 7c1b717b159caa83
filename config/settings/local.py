"""Single-machine development: SQLite and the filesystem broker unless the environment says otherwise."""

from .base import *  # noqa: F403
from .base import ALLOWED_HOSTS
from .env import env_bool

# Debug pages by default only while the site answers to this machine's loopback names alone: a
# server started without DJANGO_SETTINGS_MODULE (these settings) for a real host name shows none
# unless DJANGO_DEBUG asks for them.
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]"}
DEBUG = env_bool("DJANGO_DEBUG", set(ALLOWED_HOSTS) <= LOOPBACK_HOSTS)
