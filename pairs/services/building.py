"""Build a pair set from a dataset's questions: every rule proposes minimal edits of each
ground truth (the correct response), and each edit becomes a pair under review.

Resumable and idempotent: questions are processed in committed batches, a question with a
``QuestionBuild`` row is never processed again, and a pair is unique per (set, context,
correct, incorrect). Deterministic for a seed: each rule draws from a generator seeded by the
seed, the rule's type and the dialogue's texts (not database ids), so the same dialogue gets the
same pairs in any database and any batch.
"""

from __future__ import annotations

import hashlib
import json
import traceback
from collections import Counter
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Count

from annotation.models import Question, Repository, Turn
from annotation.selectors import ground_truths_present_check, testset_dataset_get
from core.errors import UserError
from core.services.jobs import JobProgress
from pairs.edits import Criterion, Edit, EditRule, PairType, rule_rng
from pairs.models import Pair, PairSet, QuestionBuild
from pairs.services.rule_setup import RuleInputs, rules_build

PHASE_PREPARE = "preparing the rules"
PHASE_BUILD = "building pairs"
FAILED = "failed"


def pair_key(context: Sequence[str], correct: str, incorrect: str) -> str:
    return hashlib.sha256(json.dumps([list(context), correct, incorrect], ensure_ascii=False).encode()).hexdigest()


def build_settings_check(*, types: Sequence[str], criteria: Sequence[str], per_question: int) -> None:
    unknown = sorted(set(types) - set(PairType.ALL))
    if unknown or not types:
        raise UserError(f"--types: choose from {', '.join(PairType.ALL)} (got {', '.join(types) or 'none'})")
    unknown = sorted(set(criteria) - set(Criterion.ALL))
    if unknown or (PairType.CONTENT in types and not criteria):
        raise UserError(f"--criterion: choose from {', '.join(Criterion.ALL)} (got {', '.join(criteria) or 'none'})")
    if per_question < 1:
        raise UserError(f"--per-question must be at least 1, not {per_question}")


def pair_set_for_build(
    *,
    dataset_name: str,
    set_name: str,
    types: Sequence[str],
    criteria: Sequence[str],
    per_question: int,
    seed: int,
    repository_name: str = "",
    created_by=None,
) -> PairSet:
    """The pair set to build into: created on the first run; a later run resumes it and must ask
    for the same settings (another seed or type list is another set)."""
    build_settings_check(types=types, criteria=criteria, per_question=per_question)
    dataset = testset_dataset_get(name=dataset_name, adds="contrastive pairs")
    repository = build_repository_get(name=repository_name, needed=PairType.CONTENT in types)
    wanted = {
        "types": [t for t in PairType.ALL if t in types],
        "criteria": [c for c in Criterion.ALL if c in criteria] if PairType.CONTENT in types else [],
        "per_question": per_question,
        "seed": seed,
    }
    with transaction.atomic():
        pair_set, created = PairSet.objects.select_for_update().get_or_create(
            name=set_name,
            defaults={"dataset": dataset, "repository": repository, "build_settings": wanted, "created_by": created_by},
        )
        if created:
            return pair_set
        if pair_set.dataset_id != dataset.pk:
            raise UserError(f"pair set {set_name!r} exists and was not built from dataset {dataset.name!r}")
        if pair_set.build_settings != wanted or pair_set.repository_id != (repository.pk if repository else None):
            raise UserError(
                f"pair set {set_name!r} was built with {_describe(pair_set)}; resume it with the same settings "
                "or build another set"
            )
    return pair_set


def pairs_build(*, pair_set: PairSet, progress: JobProgress | None = None, batch_size: int = 200) -> dict:
    settings = pair_set.build_settings
    dataset = pair_set.dataset
    if dataset is None:
        raise UserError(f"pair set {pair_set.name!r} has no dataset to build from")
    originals = Question.objects.filter(dataset=dataset, derived_from__isnull=True)
    ground_truths_present_check(dataset=dataset, otherwise="no pair was built")
    if progress:
        progress.update(done=0, total=0, phase=PHASE_PREPARE, force=True)
    rules = rules_build(
        types=settings["types"],
        inputs=RuleInputs(criteria=tuple(settings["criteria"]), repository=pair_set.repository),
    )
    finished = QuestionBuild.objects.filter(pair_set=pair_set).exclude(error__gt="")
    pending = originals.exclude(id__in=finished.values("question_id")).order_by("id")
    total = originals.count()
    report: dict = {"set": pair_set.name, "dataset": dataset.name, **settings, "questions": total}
    report["rules"] = {rule.type: rule.version() for rule in rules}
    report["skipped_finished"] = total - pending.count()
    outcomes: dict[str, Counter] = {rule.type: Counter() for rule in rules}
    pairs_added = failed = 0
    done = report["skipped_finished"]
    if progress:
        progress.update(done=done, total=total, phase=PHASE_BUILD, unit="questions", force=True)
    last_id = 0
    while True:
        batch = list(pending.filter(id__gt=last_id).values_list("id", "ground_truth", "context_id")[:batch_size])
        if not batch:
            break
        last_id = batch[-1][0]
        builds = _build_batch(
            pair_set, batch, rules=rules, seed=settings["seed"], per_question=settings["per_question"]
        )
        for build in builds:
            failed += bool(build.error)
            pairs_added += build.pairs_added
            for rule_type, outcome in build.outcomes.items():
                outcomes[rule_type][outcome] += 1
        done += len(batch)
        if progress:
            progress.update(done=done, total=total, failed=failed, force=True)
    report.update(
        failed=failed,
        pairs_added=pairs_added,
        outcomes={rule_type: dict(sorted(counts.items())) for rule_type, counts in outcomes.items()},
        pairs=pair_set.pairs.count(),
    )
    PairSet.objects.filter(pk=pair_set.pk).update(report=report)
    return report


def _build_batch(pair_set, batch, *, rules: list[EditRule], seed: int, per_question: int) -> list[QuestionBuild]:
    turns: dict[int, list[str]] = {}
    for context_id, text in (
        Turn.objects.filter(context_id__in={c for _, _, c in batch})
        .order_by("context_id", "position")
        .values_list("context_id", "text")
    ):
        turns.setdefault(context_id, []).append(text)
    pairs: list[Pair] = []
    builds: list[QuestionBuild] = []
    for question_id, ground_truth, context_id in batch:
        context = turns.get(context_id, [])
        build = QuestionBuild(pair_set=pair_set, question_id=question_id, outcomes={})
        keys: set[str] = set()  # the same edit proposed twice (two rules, two samples) is one pair
        for rule in rules:
            rng = rule_rng(seed=seed, rule_type=rule.type, context=context, response=ground_truth)
            try:
                outcome = rule.propose(context=context, response=ground_truth, rng=rng, per_question=per_question)
            except Exception:  # a rule failing on one response: recorded, the others go on
                build.outcomes[rule.type] = FAILED
                build.error += f"{rule.type}: {traceback.format_exc()[-2000:]}"
                continue
            edits = [e for e in outcome.edits if e.incorrect != ground_truth]
            build.outcomes[rule.type] = "generated" if edits else (outcome.skipped or "no_edit")
            for edit in edits:
                key = pair_key(context, ground_truth, edit.incorrect)
                if key not in keys:
                    keys.add(key)
                    pairs.append(_pair(pair_set, question_id, context, ground_truth, edit, key, seed))
        builds.append(build)
    in_batch = Pair.objects.filter(pair_set=pair_set, question_id__in=[b.question_id for b in builds])
    with transaction.atomic():
        before = _per_question(in_batch)
        # a pair saved before (by a run that failed on another rule of the question, or by the same
        # dialogue in another question) stays as it is and is not counted again
        Pair.objects.bulk_create(pairs, ignore_conflicts=True)
        after = _per_question(in_batch)
        for build in builds:
            build.pairs_added = after.get(build.question_id, 0) - before.get(build.question_id, 0)
        QuestionBuild.objects.bulk_create(
            builds,
            update_conflicts=True,
            unique_fields=["pair_set", "question"],
            update_fields=["outcomes", "pairs_added", "error"],
        )
    return builds


def _per_question(pairs) -> dict[int, int]:
    return dict(pairs.values("question_id").annotate(n=Count("id")).values_list("question_id", "n"))


def _pair(pair_set, question_id: int, context: list[str], correct: str, edit: Edit, key: str, seed: int) -> Pair:
    return Pair(
        pair_set=pair_set,
        question_id=question_id,
        context=context,
        correct=correct,
        incorrect=edit.incorrect,
        generated_incorrect=edit.incorrect,
        type=edit.type,
        subtype=edit.subtype,
        criterion=edit.criterion,
        correct_start=edit.span[0],
        correct_end=edit.span[1],
        incorrect_start=edit.incorrect_span[0],
        incorrect_end=edit.incorrect_span[1],
        provenance={"method": "rules", "seed": seed, **edit.details},
        key=key,
    )


def build_repository_get(*, name: str, needed: bool) -> Repository | None:
    """The repository named, or the only one when content words need one and none is named."""
    if name:
        repository = Repository.objects.filter(name=name).first()
        if repository is None:
            raise UserError(f"no repository {name!r}")
        return repository
    if not needed:
        return None
    names = list(Repository.objects.order_by("name").values_list("name", flat=True)[:11])
    if len(names) == 1:
        return Repository.objects.get(name=names[0])
    if not names:
        raise UserError("substituted content words need a repository (the bigram model's text): import one first")
    raise UserError(f"substituted content words need a repository: choose one with --repository ({', '.join(names)})")


def _describe(pair_set: PairSet) -> str:
    s = pair_set.build_settings
    repo = pair_set.repository.name if pair_set.repository else "no repository"
    return (
        f"types {','.join(s.get('types', []))}, criteria {','.join(s.get('criteria', [])) or '-'}, "
        f"per question {s.get('per_question')}, seed {s.get('seed')}, {repo}"
    )
