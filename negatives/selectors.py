"""Reads: the dialogue text a masked LM is fine-tuned on.

Every read streams (``.iterator()``): a repository can hold millions of utterances, and a
fine-tuning run reads its texts once per epoch.
"""

import hashlib
from collections.abc import Iterator

from django.db.models import Max

from annotation.models import Dataset, Question, Repository, Turn, Utterance

_CHUNK = 5000


def dataset_texts(*, dataset: Dataset) -> Iterator[str]:
    """Each distinct non-blank text of the dataset once, in id order: its contexts' turns, then
    its questions' ground truths. A turn recurs in the contexts of consecutive questions; once
    is what one epoch over the dialogues means."""
    seen: set[bytes] = set()
    turns = (
        Turn.objects.filter(context__dataset=dataset)
        .order_by("id")
        .values_list("text", flat=True)
        .iterator(chunk_size=_CHUNK)
    )
    truths = (
        Question.objects.filter(dataset=dataset)
        .order_by("id")
        .values_list("ground_truth", flat=True)
        .iterator(chunk_size=_CHUNK)
    )
    for source in (turns, truths):
        for text in source:
            text = text.strip()
            if not text:
                continue
            key = hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()
            if key not in seen:
                seen.add(key)
                yield text


def repository_snapshot(*, repository: Repository) -> tuple[int, int]:
    """(highest utterance id, utterances up to it): imports only add rows, so reading up to that
    id gives every epoch the same texts while an import runs."""
    top = Utterance.objects.filter(repository=repository).aggregate(m=Max("id"))["m"] or 0
    return top, Utterance.objects.filter(repository=repository, id__lte=top).count()


def repository_texts(*, repository: Repository, up_to_id: int) -> Iterator[str]:
    """The repository's utterances (distinct by construction) up to ``up_to_id``, in id order."""
    rows = (
        Utterance.objects.filter(repository=repository, id__lte=up_to_id)
        .order_by("id")
        .values_list("text", flat=True)
        .iterator(chunk_size=_CHUNK)
    )
    for text in rows:
        text = text.strip()
        if text:
            yield text
