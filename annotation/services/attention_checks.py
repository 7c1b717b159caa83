"""Attention checks: an utterance that answers nothing in the unit, which a careful annotator scores
"not appropriate at all".

A check comes from the dataset's attention-check repository, never from the dataset itself: a
ground truth of another unit shown as a check, met again among that unit's responses, would mark
it. An utterance is a check only while its normalised text (``text_hash``, core.text) is no context
turn and no candidate (ground truths included) of any dataset, and only for an annotator who has
not had it as a check before. It is at least ATTENTION_CHECK_MIN_TOKENS words long: short lines
("Okay.", "What?") fit almost any context, so a careful annotator could rightly score them high.

Repositories hold millions of utterances: one is drawn by a few probes from random ids, each an
index range walk of at most PROBE_WINDOW ids whose rows are tested by indexed lookups, never a
read of the repository or of the dataset's candidates.
"""

import logging
import random

from django.db.models import Exists, OuterRef, Subquery

from annotation.models import Annotator, Assignment, Candidate, Dataset, Repository, Turn, Utterance

logger = logging.getLogger(__name__)

ATTENTION_CHECK_MIN_TOKENS = 5
# Random starting ids tried before the last probe, which starts at the repository's lowest id so
# that a small repository is searched whole.
RANDOM_PROBES = 3
PROBE_WINDOW = 1000


def attention_check_pick(*, dataset: Dataset, annotator: Annotator, rng: random.Random) -> Utterance | None:
    """An utterance to show ``annotator`` as an attention check in a unit of ``dataset``, or None
    when the dataset has no attention-check repository or no probe found one left for them.
    At most 1 + RANDOM_PROBES + 1 queries."""
    repository_id = dataset.attention_check_repository_id
    if repository_id is None:
        return None
    lo, hi = _id_bounds(repository_id)
    if lo is None or hi is None or lo > hi:
        return None
    eligible = (
        Utterance.objects.filter(repository_id=repository_id, n_tokens__gte=ATTENTION_CHECK_MIN_TOKENS)
        .filter(~Exists(Turn.objects.filter(text_hash=OuterRef("text_hash"))))
        .filter(~Exists(Candidate.objects.filter(text_hash=OuterRef("text_hash"))))
        .filter(~Exists(Assignment.objects.filter(annotator_id=annotator.pk, check_utterance_id=OuterRef("pk"))))
        .only("id", "text")
        .order_by("id")
    )
    starts = [rng.randint(lo, hi) for _ in range(RANDOM_PROBES)] + [lo]
    for start in starts:
        found = eligible.filter(id__gte=start, id__lt=start + PROBE_WINDOW).first()
        if found is not None:
            return found
    logger.info(
        "no attention check for annotator %s in dataset %s: no unused utterance found in repository %s",
        annotator.pk,
        dataset.name,
        repository_id,
    )
    return None


def _id_bounds(repository_id: int) -> tuple[int | None, int | None]:
    """The lowest and highest utterance id of the repository, in one query of two index probes.

    Ordered by (repository_id, id) from a range on repository_id, so that only the
    (repository, id) index serves them: MIN(id) WHERE repository_id = ... may be planned as a walk
    along the primary key that reads every row of the repositories imported before this one.
    Past an empty repository the two probes land in its neighbours, and lo > hi."""
    utterances = Utterance.objects.order_by()
    bounds = (
        Repository.objects.filter(pk=repository_id)
        .annotate(
            lo=Subquery(
                utterances.filter(repository_id__gte=repository_id).order_by("repository_id", "id").values("id")[:1]
            ),
            hi=Subquery(
                utterances.filter(repository_id__lte=repository_id).order_by("-repository_id", "-id").values("id")[:1]
            ),
        )
        .values_list("lo", "hi")
        .first()
    )
    return bounds or (None, None)


def dataset_check_repository_adopt(*, dataset: Dataset, repository: Repository) -> bool:
    """Make ``repository`` the dataset's attention-check repository unless it has one already
    (building candidate pools from a repository calls this). Returns whether it changed."""
    changed = bool(
        Dataset.objects.filter(pk=dataset.pk, attention_check_repository__isnull=True).update(
            attention_check_repository=repository
        )
    )
    if changed:
        dataset.attention_check_repository = repository
    return changed
