"""Admin of the evaluation app, one module per area (imported here so that autodiscovery finds it)."""

from . import campaigns, generations, pairs, systems  # noqa: F401
