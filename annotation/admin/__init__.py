from . import corpus, jobs, release, scoring  # noqa: F401  (registers the ModelAdmins)
