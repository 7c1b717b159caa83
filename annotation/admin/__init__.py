from . import corpus, crowd, release, scoring  # noqa: F401  (registers the ModelAdmins)
