"""The evaluation part of the demo (`make run`): the shipped TF-IDF baseline registered as a system,
so that the demo test set can be evaluated from the first page. A step of annotation's demo loader,
registered in apps.py."""

from evaluation.models import System, SystemKind
from evaluation.models.system import TFIDF_BASELINE

from .systems import system_register

DEMO_SYSTEM = "tfidf-baseline"


def demo_baseline_system(with_pools: bool) -> list[str]:
    if System.objects.filter(name=DEMO_SYSTEM).exists():
        return []
    system_register(
        name=DEMO_SYSTEM,
        kind=SystemKind.PLUGIN,
        plugin=TFIDF_BASELINE,
        description="The model-free TF-IDF baseline (Lowe et al. 2015): selects the candidate closest to the "
        "context by TF-IDF cosine; its IDF is fitted on each scored batch (name an utterance file as its "
        "checkpoint to fit it on a repository instead).",
    )
    return [f"system {DEMO_SYSTEM}: the TF-IDF baseline ({TFIDF_BASELINE})"]
