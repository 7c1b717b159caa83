"""Optional check by annotators: each pair's incorrect response joins its question as an
ordinary candidate (0-5 scores, the same units of work), and the filter rules that drop a
retrieved false candidate drop the pair: enough annotators found the incorrect response
acceptable (it is not incorrect) or ungrammatical (a pair should differ in one error, not in
grammar), or rejected the correct response."""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from annotation.models import Candidate, CandidateSource, QuestionWork
from annotation.rules import (
    FalseDecision,
    GroundTruthDecision,
    ScoreCounts,
    decide_false_candidate,
    decide_ground_truth,
)
from annotation.selectors import candidate_score_counts, filter_rules_current
from annotation.services.assignment import work_refresh
from core.errors import UserError
from core.text import text_hash
from pairs.models import AnnotatorVerdict, Pair, PairSet, Review

_VERDICT = {
    FalseDecision.KEPT: AnnotatorVerdict.KEPT,
    FalseDecision.ACCEPTABLE: AnnotatorVerdict.ACCEPTABLE,
    FalseDecision.UNGRAMMATICAL: AnnotatorVerdict.UNGRAMMATICAL,
    FalseDecision.UNDECIDED: AnnotatorVerdict.UNDECIDED,
}


def pairs_send_to_annotators(*, pair_set: PairSet) -> dict:
    """Add the incorrect response of every pair not rejected (and not sent yet) to its question.
    A text the question already has (a retrieved candidate, another pair) is scored once."""
    if pair_set.dataset_id is None:
        raise UserError(f"pair set {pair_set.name!r} was imported: its pairs have no questions to join")
    pairs = list(
        pair_set.pairs.filter(candidate__isnull=True, question__isnull=False)
        .exclude(review=Review.REJECTED)
        .values_list("id", "question_id", "incorrect", "type", "subtype", "criterion")
    )
    questions = {question_id for _, question_id, *_ in pairs}
    in_questions = Candidate.objects.filter(question__in=questions)
    truths = dict(in_questions.filter(is_ground_truth=True).values_list("question_id", "text_hash"))
    # Annotators see words, not punctuation or case: an incorrect response that differs from the
    # ground truth only there would be the ground truth itself to them.
    same = [p for p in pairs if truths.get(p[1]) == text_hash(p[2])]
    pairs = [p for p in pairs if p not in same]
    with transaction.atomic():
        before = in_questions.count()
        Candidate.objects.bulk_create(
            [
                Candidate(
                    question_id=question_id,
                    text=incorrect,
                    text_hash=text_hash(incorrect),
                    source=CandidateSource.CONTRASTIVE,
                    provenance={"method": "contrastive_pair", "pair_set": pair_set.name, "pair": pair_id}
                    | {"type": kind, "subtype": subtype, "criterion": criterion},
                )
                for pair_id, question_id, incorrect, kind, subtype, criterion in pairs
            ],
            ignore_conflicts=True,  # a text the question already has is scored once
        )
        added = in_questions.count() - before
        ids = {(q, digest): pk for q, digest, pk in in_questions.values_list("question_id", "text_hash", "id")}
        Pair.objects.bulk_update(
            [
                Pair(id=pair_id, candidate_id=ids[(question_id, text_hash(incorrect))], annotator_verdict="undecided")
                for pair_id, question_id, incorrect, *_ in pairs
            ],
            ["candidate", "annotator_verdict"],
            batch_size=1000,
        )
    reopened = 0
    for question_id in QuestionWork.objects.filter(question_id__in=questions).values_list("question_id", flat=True):
        reopened += work_refresh(question_id=question_id)
    return {
        "pairs_sent": len(pairs),
        "candidates_added": added,
        "questions": len(questions),
        "reopened": reopened,
        "same_words_as_ground_truth": len(same),
    }


def pair_verdicts_refresh(*, pair_set: PairSet) -> dict:
    """Apply the current filter rules to the scores of every sent pair."""
    if pair_set.dataset is None:
        return {}
    rules = filter_rules_current()
    planned = pair_set.dataset.annotators_per_item
    sent = pair_set.pairs.filter(candidate__isnull=False)
    rows = candidate_score_counts(dataset=pair_set.dataset, rules=rules).filter(
        question_id__in=sent.values("question_id")
    )
    ground_truth: dict[int, GroundTruthDecision] = {}
    false: dict[int, FalseDecision] = {}
    for row in rows.iterator(chunk_size=5000):
        counts = ScoreCounts(row["n_scores"], row["n_acceptable"], row["n_ungrammatical"], row["n_low"])
        if row["is_ground_truth"]:
            ground_truth[row["question_id"]] = decide_ground_truth(counts, rules, planned)
        else:
            false[row["id"]] = decide_false_candidate(counts, rules, planned)
    verdicts: dict[str, list[int]] = defaultdict(list)
    for pair_id, question_id, candidate_id in sent.values_list("id", "question_id", "candidate_id"):
        if ground_truth.get(question_id) == GroundTruthDecision.REJECTED:
            verdict = AnnotatorVerdict.GROUND_TRUTH_REJECTED
        else:
            verdict = _VERDICT[false.get(candidate_id, FalseDecision.UNDECIDED)]
        verdicts[verdict].append(pair_id)
    with transaction.atomic():
        for verdict, pair_ids in verdicts.items():
            Pair.objects.filter(id__in=pair_ids).exclude(annotator_verdict=verdict).update(annotator_verdict=verdict)
    return {verdict: len(ids) for verdict, ids in sorted(verdicts.items())}
