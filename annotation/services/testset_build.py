"""build_testset: freeze a test set of 1 ground truth + k false candidates per question (§3.2)."""

import hashlib
import random
from importlib.metadata import PackageNotFoundError, version

from django.db import transaction
from django.utils import timezone

from annotation.models import Candidate, Dataset, Question, Score, TestSet, TestSetCandidate, TestSetQuestion
from annotation.rules import plan_questions
from annotation.selectors import (
    candidates_agreement,
    dataset_agreement,
    filter_preview,
    filter_rules_get,
    question_pools,
)
from annotation.testset_io import EXPORTS, FORMAT_VERSIONS, export_filename, render_export
from core.errors import UserError
from core.names import slug_check
from core.services.jobs import JobProgress

from .annotators import annotator_label


def testset_name_check(*, name: str) -> str:
    """The name of a new test set: a slug no test set has (test sets are frozen, never replaced)."""
    slug_check(name=name, what="test set")
    if TestSet.objects.filter(name=name).exists():
        raise UserError(f"a test set named {name!r} exists already; test sets are frozen, choose a new name")
    return name


def testset_build(
    *,
    dataset_name: str,
    name: str,
    false_per_question: int = 3,
    seed: int = 0,
    rules_version: int | None = None,
    progress: JobProgress | None = None,
) -> TestSet:
    """Build and freeze a test set. Deterministic for a seed: which candidates are chosen, which
    acceptable candidates become derived ground truths, and the candidate order."""
    slug_check(name=name, what="test set")
    if false_per_question < 1:
        raise UserError("--false must be at least 1")
    dataset = Dataset.objects.filter(name=dataset_name).first()
    if dataset is None:
        raise UserError(f"no dataset {dataset_name!r}")
    if dataset.is_rating:
        raise UserError(
            f"dataset {dataset.name!r} rates generated responses 1-5 (to rank systems); "
            "test sets are built from datasets whose candidates were scored 0-5 for selection"
        )
    try:
        rules = filter_rules_get(version=rules_version)
    except Exception:
        raise UserError(f"no filter rules version {rules_version}") from None
    with transaction.atomic():
        testset_name_check(name=name)
        pools = question_pools(dataset=dataset, rules=rules)
        plans = []  # (original question id, PlannedQuestion)
        for question_id, pool in pools.items():
            rng = random.Random(f"{seed}:{question_id}")
            plans.extend(
                (question_id, planned)
                for planned in plan_questions(pool, false_per_question=false_per_question, rng=rng)
            )
        if not plans:
            preview = filter_preview(dataset=dataset, rules=rules, false_per_question=false_per_question)
            raise UserError(
                preview.nothing_buildable_reason()
                or f"dataset {dataset.name!r}: no question passes the rules with {false_per_question} false candidates"
            )
        if progress:
            progress.update(done=1, total=4, force=True, phase="building the test set", unit="steps")
        question_ids = _questions_for(plans, dataset=dataset)
        testset = TestSet.objects.create(
            name=name, dataset=dataset, rules=rules, seed=seed, false_per_question=false_per_question
        )
        items = TestSetQuestion.objects.bulk_create(
            [
                TestSetQuestion(testset=testset, question_id=qid, position=i)
                for i, qid in enumerate(question_ids, start=1)
            ]
        )
        snapshots = _score_snapshots([cid for _, p in plans for cid in (p.ground_truth_id, *p.false_ids)])
        rows = []
        for item, (_, planned) in zip(items, plans, strict=True):
            chosen = [planned.ground_truth_id, *planned.false_ids]
            order = list(range(len(chosen)))
            random.Random(f"{seed}:{item.question_id}:order").shuffle(order)
            rows.extend(
                TestSetCandidate(
                    item=item, candidate_id=cid, position=pos, is_ground_truth=(i == 0), scores=snapshots.get(cid, [])
                )
                for i, (cid, pos) in enumerate(zip(chosen, order, strict=True))
            )
        TestSetCandidate.objects.bulk_create(rows)
        if progress:
            progress.update(done=2, total=4, force=True)
        preview = filter_preview(dataset=dataset, rules=rules, false_per_question=false_per_question)
        testset.manifest = {
            "format_version": 2,  # 2: every file entry names its format_version
            "name": name,
            "dataset": dataset.name,
            "created_at": timezone.now().isoformat(),
            "software": {"wellchosen": package_version()},
            "seed": seed,
            "false_per_question": false_per_question,
            "annotators_per_item": dataset.annotators_per_item,
            "rules": {"version": rules.version, **rules.thresholds()},
            "counts": {
                "questions": len(items),
                "derived_questions": sum(1 for _, p in plans if p.derived),
                "candidates": len(rows),
                "scores": sum(len(r.scores) for r in rows),
                "source_questions": preview.questions,
                "candidates_by_decision": preview.candidates_by_decision,
                "source_questions_by_ground_truth": preview.questions_by_ground_truth,
                "source_questions_too_few_false": preview.questions_too_few_false,
            },
            "agreement": {
                "dataset": dataset_agreement(dataset=dataset),
                "release": candidates_agreement(candidate_ids=[r.candidate_id for r in rows]),
            },
        }
        testset.manifest["files"] = testset_file_entries(testset)
        testset.save(update_fields=["manifest"])
    return testset


def _questions_for(plans, *, dataset: Dataset) -> list[int]:
    """Question ids in the test set's order; derived questions are created once and then reused."""
    wanted = {(orig, p.ground_truth_id) for orig, p in plans if p.derived}
    existing = {
        (q.derived_from_id, q.derived_ground_truth_id): q.pk
        for q in Question.objects.filter(derived_from_id__in={o for o, _ in wanted}, dataset=dataset)
    }
    missing = sorted(wanted - existing.keys())
    if missing:
        originals = Question.objects.in_bulk({o for o, _ in missing})
        texts = dict(Candidate.objects.filter(pk__in={c for _, c in missing}).values_list("pk", "text"))
        created = Question.objects.bulk_create(
            [
                Question(
                    dataset=dataset,
                    context_id=originals[o].context_id,
                    ground_truth=texts[c],
                    derived_from_id=o,
                    derived_ground_truth_id=c,
                )
                for o, c in missing
            ]
        )
        existing.update({(q.derived_from_id, q.derived_ground_truth_id): q.pk for q in created})
    return [existing[(orig, p.ground_truth_id)] if p.derived else orig for orig, p in plans]


def _score_snapshots(candidate_ids: list[int]) -> dict[int, list]:
    snapshots: dict[int, list] = {}
    for start in range(0, len(candidate_ids), 5000):
        scores = (
            Score.objects.counted()
            .filter(candidate_id__in=candidate_ids[start : start + 5000])
            .select_related("annotator")
            .order_by("candidate_id", "annotator_id")
        )
        for score in scores:
            snapshots.setdefault(score.candidate_id, []).append([annotator_label(score.annotator), score.value])
    return snapshots


def testset_file_entries(testset: TestSet) -> dict:
    """The manifest's "files": each export's name, sha256 and format version, as the test set is now."""
    return {kind: _file_entry(testset, kind) for kind in EXPORTS}


def _file_entry(testset: TestSet, kind: str) -> dict:
    digest = hashlib.sha256()
    for chunk in render_export(testset, kind):
        digest.update(chunk.encode("utf-8"))
    return {
        "name": export_filename(testset, kind),
        "sha256": digest.hexdigest(),
        "format_version": FORMAT_VERSIONS[kind],
    }


def package_version() -> str:
    try:
        return version("wellchosen")
    except PackageNotFoundError:
        return "unknown"
