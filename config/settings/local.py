"""Single-machine development: SQLite and the filesystem broker unless the environment says otherwise."""

from .base import *  # noqa: F403
from .env import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
