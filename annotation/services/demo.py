"""Demo data and accounts for `make run`: text written by the WellChosen authors (annotation/demo/)."""

import secrets
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Annotator, AnnotatorProvider, Dataset, DatasetMembership

from .dialogue_import import dialogues_import

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
DEMO_DATASET = "demo-dialogues"

# Demo steps of higher apps (testsets: the annotated demo dataset and a test set built from it;
# retrieval: the demo repository and candidate pools), registered from
# their AppConfig.ready() and run after this app's own, in order. A step takes ``with_pools`` and
# returns what it loaded, one line each; like every step it skips what is present already.
DemoStep = Callable[[bool], list[str]]
_steps: list[DemoStep] = []
# Model steps train the demo's toy models (negatives: a masked LM; evaluation: a causal system) and
# run after the data steps unless the loader is told to skip them (they need torch and most of a
# minute the first time). A model step takes nothing and skips a model that is present.
DemoModelStep = Callable[[], list[str]]
_model_steps: list[DemoModelStep] = []


def demo_step_register(step: DemoStep) -> None:
    if step not in _steps:
        _steps.append(step)


def demo_model_step_register(step: DemoModelStep) -> None:
    if step not in _model_steps:
        _model_steps.append(step)


def demo_load(*, with_pools: bool = True, with_models: bool = True) -> list[str]:
    """Load the demo dataset, then each registered step of a higher app (the annotated demo dataset
    and a test set built from it, the demo repository, candidate pools for the demo dialogues and
    opening them for annotation), then, ``with_models``, each model step (the toy models);
    whatever is present already is skipped."""
    done = []
    with transaction.atomic():
        if not Dataset.objects.filter(name=DEMO_DATASET).exists():
            report = dialogues_import(path=DEMO_DIR / "dialogues.jsonl", fmt="jsonl", dataset_name=DEMO_DATASET)
            done.append(f"dataset {DEMO_DATASET}: {report['questions']} questions")
    for step in _steps:
        done.extend(step(with_pools))
    for model_step in _model_steps if with_models else ():
        done.extend(model_step())
    return done


def demo_accounts_ensure() -> dict[str, str]:
    """A researcher (admin) and an annotator account. Passwords are random, made once and kept in
    the data directory so that every `make run` can print them."""
    store = Path(settings.WELLCHOSEN_DATA_DIR) / "demo-credentials.txt"
    known = dict(line.split(":", 1) for line in store.read_text().splitlines() if ":" in line) if store.exists() else {}
    users = get_user_model().objects
    credentials = {}
    for username, staff in (("researcher", True), ("annotator", False)):
        user = users.filter(username=username).first()
        password = known.get(username)
        if user is None or password is None or not user.check_password(password):
            password = secrets.token_urlsafe(9)
            if user is None:
                user = users.create_user(username=username, password=password, is_staff=staff, is_superuser=staff)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
        annotator, _ = Annotator.objects.get_or_create(
            user=user,
            defaults={"provider": AnnotatorProvider.INTERNAL, "external_id": username, "display_name": username},
        )
        for dataset in Dataset.objects.filter(name=DEMO_DATASET):
            DatasetMembership.objects.get_or_create(annotator=annotator, dataset=dataset)
        credentials[username] = password
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("".join(f"{u}:{p}\n" for u, p in credentials.items()))
    store.chmod(0o600)
    return credentials
