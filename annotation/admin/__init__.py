from . import corpus, scoring, testset  # noqa: F401  (registers the ModelAdmins)
