from . import corpus, crowd, scoring, testset  # noqa: F401  (registers the ModelAdmins)
