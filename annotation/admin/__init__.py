from . import corpus, release, scoring  # noqa: F401  (registers the ModelAdmins)
