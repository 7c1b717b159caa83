from . import corpus, scoring  # noqa: F401  (registers the ModelAdmins)
