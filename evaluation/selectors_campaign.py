"""Reads for evaluation campaigns: human ratings, responses and references, RANDOM questions.

Human ratings come from :func:`evaluation.selectors.human_ratings`: imported :class:`ResponseRating`
rows of the campaign's ``human_aspect`` (annotator key = position in the file, "0".."3" for Zhao et
al.) merged with the annotation ``Score`` rows collected on ``GeneratedResponse.candidate`` in a
rating dataset (key ``a<annotator id>``, appropriateness only, excluded annotators left out).

A response's ratings are a tuple in annotator-key order. :func:`evaluation.metrics.correlation.
split_half_bound` splits these positions into halves: for an imported file a position is one
person; for collected scores it is a rating slot (crowd annotators differ from response to
response), the usual approximation for crowd ratings.
"""

from __future__ import annotations

from collections import defaultdict

from annotation.models import Repository, Utterance
from evaluation.baselines import Question
from evaluation.models import Campaign, GeneratedResponse
from evaluation.selectors import context_turns, human_ratings
from testsets.models import TestSetCandidate, TestSetQuestion


def campaign_generation_systems(*, campaign: Campaign) -> dict[int, dict]:
    """``{generation id: {"system": name, "kind": kind, "dataset_id": id or None}}`` of the campaign (one query)."""
    return {
        row["id"]: {"system": row["system__name"], "kind": row["system__kind"], "dataset_id": row["dataset_id"]}
        for row in campaign.generations.order_by("-created_at", "-id").values(
            "id", "system__name", "system__kind", "dataset_id"
        )
    }


def campaign_generation_per_system(
    *, campaign: Campaign, generations: dict[int, dict] | None = None
) -> tuple[dict[str, int], list[str]]:
    """``{system name: generation id}`` (a system's newest generation in the campaign), and notes."""
    chosen: dict[str, int] = {}
    notes = []
    if generations is None:
        generations = campaign_generation_systems(campaign=campaign)
    for generation_id, info in generations.items():  # newest first
        if info["system"] in chosen:
            notes.append(f"system {info['system']} has several generations in the campaign; the newest is used")
            continue
        chosen[info["system"]] = generation_id
    return chosen, notes


def campaign_rated_contexts(*, campaign: Campaign) -> tuple[dict[str, dict[str, tuple[float, ...]]], list[str]]:
    """Per system, the ratings of the contexts it is compared on, and notes on what was left out.

    Generated here (every generation answers a dataset's questions, ``context_key`` "q<id>"): each
    system keeps only the contexts rated for every rated system, so all are judged on the same
    contexts. Imported (Zhao et al.: each system was rated on its own random subset of contexts, one
    ``dialogue_id`` per response): each system keeps all its rated responses, as the paper does.
    """
    generations = campaign_generation_systems(campaign=campaign)
    chosen, notes = campaign_generation_per_system(campaign=campaign, generations=generations)
    rated = human_ratings(generation_ids=list(chosen.values()), aspect=campaign.human_aspect)
    by_system = {
        system: {key: tuple(value for _, value in pairs) for key, pairs in per_context.items()}
        for system, per_context in rated.items()
        if per_context
    }
    if by_system and all(info["dataset_id"] is not None for info in generations.values()):
        shared = set.intersection(*(set(r) for r in by_system.values()))
        dropped = sum(len(r) for r in by_system.values()) - len(shared) * len(by_system)
        if dropped:
            notes.append(
                f"human scores use the {len(shared)} contexts rated for every system "
                f"({dropped} rated responses of other contexts left out)"
            )
        by_system = {s: {k: r[k] for k in sorted(shared)} for s, r in by_system.items()}
        by_system = {s: r for s, r in by_system.items() if r}
    return {s: dict(sorted(r.items())) for s, r in by_system.items()}, notes


def campaign_human_ratings(*, campaign: Campaign) -> dict[str, list[tuple[float, ...]]]:
    """``{system name: [ratings of response 1, ...]}`` on the contexts each system is compared on."""
    rated, _ = campaign_rated_contexts(campaign=campaign)
    return {system: list(per_context.values()) for system, per_context in rated.items()}


def campaign_responses(*, campaign: Campaign) -> dict[str, dict[str, tuple[str, list[str]]]]:
    """``{system name: {context key: (response text, references)}}`` of the campaign's generations (one query;
    a system's newest generation when it has several)."""
    chosen, _ = campaign_generation_per_system(campaign=campaign)
    names = {generation_id: name for name, generation_id in chosen.items()}
    out: dict[str, dict[str, tuple[str, list[str]]]] = defaultdict(dict)
    for generation_id, context_key, text, references in (
        GeneratedResponse.objects.filter(generation_id__in=names)
        .order_by("generation_id", "context_key")
        .values_list("generation_id", "context_key", "text", "references")
    ):
        out[names[generation_id]][context_key] = (text, list(references))
    return dict(out)


def testset_trial_questions(*, testset) -> list[Question]:
    """The test set's questions (context turns and ground truth) in its order, for RANDOM trials."""
    items = TestSetQuestion.objects.filter(testset=testset)
    turns = context_turns(context_ids=items.values("question__context_id"))
    truth = dict(
        TestSetCandidate.objects.filter(item__testset=testset, is_ground_truth=True).values_list(
            "item_id", "candidate__text"
        )
    )
    return [
        Question(id=str(item_id), context=tuple(turns[context_id]), ground_truth=truth[item_id])
        for item_id, context_id in items.order_by("position").values_list("id", "question__context_id")
        if item_id in truth
    ]


def repository_texts(*, repository: Repository) -> list[str]:
    """Every utterance text of the repository, in id order (the same order for the same content).

    Loaded once per RANDOM run: drawing uniformly needs random access by index, and one query per
    drawn utterance would cost far more than the memory (about 100 MB for a million utterances).
    """
    return list(
        Utterance.objects.filter(repository=repository).order_by("id").values_list("text", flat=True).iterator(5000)
    )


def dataset_campaigns(*, dataset, limit: int = 5) -> tuple[int, list[dict]]:
    """The campaigns on the dataset's test sets or pair sets: how many, and the newest ``limit``
    (name, test set, pair set, systems, the job's status, when the report was computed). Two queries."""
    from django.db.models import Count, Q

    campaigns = Campaign.objects.filter(Q(testset__dataset=dataset) | Q(pair_set__dataset=dataset))
    rows = list(
        campaigns.annotate(n_systems=Count("systems", distinct=True))
        .order_by("-created_at", "-id")
        .values("name", "testset__name", "pair_set__name", "n_systems", "job_id", "job__status", "report_at")[:limit]
    )
    return campaigns.count(), rows


def systems_compared(*, testset_id: int, ranked: list[str]) -> list[dict]:
    """Each system of ``ranked`` (best first) against the next one, on the questions of the test set
    both answered: McNemar's exact test and the questions a test set would need for the difference
    to be significant (metrics.accuracy.paired_comparison). One query."""
    from evaluation.metrics.accuracy import paired_comparison
    from evaluation.models import QuestionResult

    correct: dict[str, dict[int, bool]] = defaultdict(dict)
    for name, item_id, right in QuestionResult.objects.filter(
        evaluation__testset_id=testset_id, evaluation__system__name__in=ranked
    ).values_list("evaluation__system__name", "item_id", "correct"):
        correct[name][item_id] = right
    comparisons = []
    for first, second in zip(ranked, ranked[1:], strict=False):
        shared = sorted(set(correct[first]) & set(correct[second]))
        result = paired_comparison([correct[first][i] for i in shared], [correct[second][i] for i in shared])
        comparisons.append({"first": first, "second": second, **result})
    return comparisons
