"""The project's apps and their layers, in one place.

The settings (INSTALLED_APPS), the data model diagram (``manage.py data_model``) and
tests/test_architecture.py read these lists. pyproject.toml cannot import them, so
tests/test_architecture.py checks that its copies (the packages setuptools includes, ruff's first-party
packages, import-linter's root packages and both of its contracts) equal what these lists say.
No Django import here: the tests read this module without settings.
"""

# From the lowest layer up. An app imports from its own layer and the layers below it, never from a
# layer above; the apps of one layer import none of each other. A new app is one line in its layer
# (then `pytest tests/test_architecture.py` says what to paste into pyproject.toml).
PROJECT_LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("annotation",),
    (
        "testsets",
        "crowd",
        "retrieval",
        "negatives",
        "pairs",
    ),
    ("evaluation",),
)

# The order of INSTALLED_APPS: lower layers first.
PROJECT_APPS: tuple[str, ...] = tuple(app for layer in PROJECT_LAYERS for app in layer)

# The layers inside every app, from the outside in: the entry points (admin, views and their URLs,
# forms, commands, Celery tasks) call services, services write and call selectors, selectors read
# models. A module of one of these names that an app has belongs to that layer (``selectors_<topic>``
# modules to the selectors); an app's other modules (its job parameters, workspace step,
# providers...) sit in no layer, but an import chain through them still counts.
APP_MODULE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("admin", "views", "urls", "forms", "management", "tasks"),
    ("services",),
    ("selectors", "selectors_*"),
    ("models",),
)
