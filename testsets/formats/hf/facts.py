"""What the card and croissant.json say about a release, read once from its frozen rows.

Everything comes from the release itself (its items, the scores frozen with them, its manifest)
or from its dataset, so exporting twice says the same.
"""

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from annotation.agreement import N_CATEGORIES, fleiss_bootstrap, krippendorff_bootstrap
from annotation.annotator_pay import annotator_pay_lines
from testsets.items import testset_items
from testsets.models import TestSet

from ..sources import published_source
from .records import hf_record, question_keys, sources_split


@dataclass
class ReleaseFacts:
    testset: TestSet
    records: list[dict] = field(default_factory=list)
    # "lexical: bm25-v1" -> false candidates; generated ones name their method and model too
    tools: Counter = field(default_factory=Counter)
    annotators: int = 0  # distinct annotators whose scores the release carries
    scores_per_choice: Counter = field(default_factory=Counter)  # number of scores -> choices
    agreement: dict = field(default_factory=dict)  # the release's frozen scores: kappa and alpha with intervals
    pay: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.testset.name

    @property
    def manifest(self) -> dict:
        return self.testset.manifest


def release_facts(testset: TestSet) -> ReleaseFacts:
    facts = ReleaseFacts(testset=testset)
    keys = question_keys(testset)
    split = sources_split(testset)
    labels: set[str] = set()
    table = []
    for item in testset_items(testset):
        facts.records.append(hf_record(item, keys, split=split))
        for c in item.candidates:
            labels.update(label for label, _ in c.scores)
            facts.scores_per_choice[len(c.scores)] += 1
            table.append(np.bincount([value for _, value in c.scores], minlength=N_CATEGORIES)[:N_CATEGORIES])
            if not c.candidate.is_ground_truth:
                facts.tools[_tool(c.candidate, split=split)] += 1
    facts.annotators = len(labels)
    counts = np.array(table, dtype=np.int64).reshape(-1, N_CATEGORIES)
    facts.agreement = {"fleiss": fleiss_bootstrap(counts), "krippendorff_ordinal": krippendorff_bootstrap(counts)}
    facts.pay = annotator_pay_lines(testset.dataset)
    return facts


def _tool(candidate, *, split: bool) -> str:
    """``source: version``, and for a generated candidate how it was made; the source as the
    release's records write it."""
    source = published_source(candidate.source, split=split)
    provenance = candidate.provenance or {}
    details = [
        f"{key} {value}"
        for key in ("method", "model", "model_version")
        if (value := provenance.get(key)) and value != candidate.retriever_version
    ]
    described = f"{source}: {candidate.retriever_version}" if candidate.retriever_version else source
    return described + (f" ({', '.join(details)})" if details else "")
