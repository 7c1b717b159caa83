"""Generate negatives for a dataset's questions and add them to their pools (Park et al. 2021).

Resumable and idempotent like pool building: questions go in committed batches, each batch
records every question's outcome under the run's *setup* (model version and settings), a
question already finished under that setup is skipped, and candidates are unique per question
and text. A question that fails is recorded with its error; the others go on.
"""

import hashlib
import json
import traceback
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count

from annotation.models import Candidate, CandidateSource, Dataset, Question, QuestionWork, Turn
from annotation.selectors import ground_truths_present_check, testset_dataset_get
from annotation.services.assignment import work_refresh
from core.errors import UserError
from core.services.jobs import JobProgress
from core.text import text_hash
from negatives.manipulation import Item, Manipulation, ManipulationSettings, Manipulator
from negatives.mlm_loading import mlm_load
from negatives.models import DROP_REASONS, NO_NEGATIVE_REASONS, GenerationOutcome, QuestionGeneration

METHOD = "mlm-manipulation (Park et al., NAACL 2021)"
BATCH_SIZE = 64  # questions per committed batch
# The report's counts: a sharded job's report is the sum of its shards'.
SUMMED = (
    "questions",
    "skipped_finished",
    *(outcome.value for outcome in GenerationOutcome),
    "candidates_added",
    "questions_with_negative",  # questions that received at least one candidate
    *DROP_REASONS,
    # questions that received none, by why (NO_NEGATIVE_REASONS): negatives_report_finish nests them
    *(f"without_negative_{reason}" for reason in NO_NEGATIVE_REASONS),
    "in_annotation",  # questions already open for annotation that got new negatives
    "words",
    "words_replaced",
    "tokens",
    "tokens_replaced",
)
PHASE_LOAD, PHASE_GENERATE = "loading the masked LM", "scoring and replacing words"
PHASE_GUARD = "checking the masked LM"
TOY_MODEL_NOTE = "made with the demo's toy masked LM, for trying the workflow: not negatives to annotate for real"


@dataclass(frozen=True)
class GenerationRun:
    """What a run records on each candidate and outcome."""

    model: str
    model_version: str
    setup: str
    settings: ManipulationSettings
    toy_model: bool = False  # the demo's toy masked LM (core.toy_models): its report and candidates say so


def generation_setup(*, model_version: str, settings: ManipulationSettings) -> str:
    described = json.dumps({"model": model_version, **settings.describe()}, sort_keys=True)
    return hashlib.sha256(described.encode()).hexdigest()[:16]


def negatives_generate(
    *,
    dataset_name: str,
    mlm_path: str = "",
    settings: ManipulationSettings = ManipulationSettings(),
    batch_size: int = BATCH_SIZE,
    device: str | None = None,
    progress: JobProgress | None = None,
    job_id: int | None = None,
) -> dict:
    """Every question of the dataset in one piece (the job runs them in shards, after the masked
    LM's guard: job_handlers); no guard here."""
    dataset = negatives_prepare(dataset_name=dataset_name, settings=settings)
    if progress:
        progress.update(done=0, total=0, phase=PHASE_LOAD, force=True)
    manipulator, run = negatives_run_load(mlm_path=mlm_path, settings=settings, device=device)
    report = negatives_generate_questions(
        dataset=dataset, manipulator=manipulator, run=run, batch_size=batch_size, progress=progress, job_id=job_id
    )
    return negatives_report_finish(report)


def negatives_prepare(*, dataset_name: str, settings: ManipulationSettings) -> Dataset:
    """What is checked before any model loads: the dataset, the settings, every ground truth."""
    dataset = testset_dataset_get(name=dataset_name, adds="false candidates")
    settings_check(settings)
    ground_truths_present_check(dataset=dataset, otherwise="nothing was generated")
    return dataset


def negatives_run_load(
    *, mlm_path: str, settings: ManipulationSettings, device: str | None = None
) -> tuple[Manipulator, GenerationRun]:
    """The run's manipulator and setup, its masked LM loaded once per worker process."""
    mlm = mlm_load(path=mlm_path, device=device)
    run = GenerationRun(
        model=mlm.name,
        model_version=mlm.version,
        setup=generation_setup(model_version=mlm.version, settings=settings),
        settings=settings,
        toy_model=mlm.toy,
    )
    return Manipulator(mlm, settings), run


def negatives_report_new(*, dataset: Dataset, run: GenerationRun) -> dict:
    """A report with every count at zero (the counts are SUMMED)."""
    return {
        "dataset": dataset.name,
        "model": run.model_version,
        **({"toy_model": TOY_MODEL_NOTE} if run.toy_model else {}),
        "setup": run.setup,
        "settings": run.settings.describe(),
        **dict.fromkeys(SUMMED, 0),
    }


def negatives_generate_questions(
    *,
    dataset: Dataset,
    manipulator: Manipulator,
    run: GenerationRun,
    batch_size: int = BATCH_SIZE,
    progress=None,
    job_id: int | None = None,
    first_id: int | None = None,
    last_id: int | None = None,
) -> dict:
    """The dataset's questions (with ids ``first_id`` to ``last_id``: one shard) not finished under
    the run's setup, in committed batches of ``batch_size`` consecutive ids. Returns the counts
    (negatives_report_finish adds the shares)."""
    originals = Question.objects.filter(dataset=dataset, derived_from__isnull=True)
    if first_id is not None:
        originals = originals.filter(id__gte=first_id, id__lte=last_id)
    finished = QuestionGeneration.objects.filter(setup=run.setup).exclude(outcome=GenerationOutcome.FAILED)
    pending = originals.exclude(id__in=finished.values("question_id")).order_by("id")
    total = originals.count()
    report = negatives_report_new(dataset=dataset, run=run)
    report["questions"] = total
    report["skipped_finished"] = total - pending.count()
    done = report["skipped_finished"]
    if progress:
        progress.update(done=done, total=total, phase=PHASE_GENERATE, unit="questions", force=True)
    after_id = 0
    while True:
        batch = list(pending.filter(id__gt=after_id).values_list("id", "ground_truth", "context_id")[:batch_size])
        if not batch:
            break
        after_id = batch[-1][0]
        _generate_batch(batch, manipulator=manipulator, run=run, report=report, job_id=job_id)
        done += len(batch)
        if progress:
            progress.update(done=done, total=total, failed=report["failed"], force=True)
    return report


def negatives_report_finish(report: dict) -> dict:
    """The shares, from the counts, of the questions processed: those that received a negative
    (``share_with_negative``) and those with a word selected for replacement (what Park et al.'s
    94.89 % counts, ``share_with_selected_word``; a selected word can still yield no new candidate);
    the questions that received none by why (``without_negative``: each counted once, so with
    ``questions_with_negative`` they add up to the questions run, failed ones included); of the
    responses with a selected word, the share of their words replaced and the share of their
    WordPiece tokens (Park et al.'s 27.28 % is per token), each pooled (replaced over all)."""
    report = dict(report)
    processed = report["questions"] - report["skipped_finished"] - report["failed"]
    report["share_with_negative"] = round(report["questions_with_negative"] / processed, 4) if processed else None
    report["share_with_selected_word"] = round(report["generated"] / processed, 4) if processed else None
    report["without_negative"] = {reason: report.pop(f"without_negative_{reason}", 0) for reason in NO_NEGATIVE_REASONS}
    replaced = report.pop("words_replaced")
    report["share_of_words_replaced"] = round(replaced / report["words"], 4) if report["words"] else None
    tokens, tokens_replaced = report.pop("tokens", 0), report.pop("tokens_replaced", 0)
    report["share_of_wordpiece_tokens_replaced"] = round(tokens_replaced / tokens, 4) if tokens else None
    return report


def settings_check(settings: ManipulationSettings) -> None:
    if settings.per_question < 1:
        raise UserError(f"--per-question must be at least 1, not {settings.per_question}")
    if not 0 < settings.max_mask_share <= 1:
        raise UserError(f"--max-mask-share must be above 0 and at most 1, not {settings.max_mask_share}")
    if settings.min_words < 1:
        raise UserError(f"--min-words must be at least 1, not {settings.min_words}")
    if settings.top_k < 1:
        raise UserError(f"--top-k must be at least 1, not {settings.top_k}")


def _generate_batch(batch, *, manipulator: Manipulator, run: GenerationRun, report: dict, job_id) -> None:
    question_ids = [qid for qid, _, _ in batch]
    turns: dict[int, list[tuple[str, str]]] = {}
    for context_id, text, digest in (
        Turn.objects.filter(context_id__in={c for _, _, c in batch})
        .order_by("context_id", "position")
        .values_list("context_id", "text", "text_hash")
    ):
        turns.setdefault(context_id, []).append((text, digest))
    items = [
        Item(key=_sample_key(turns.get(cid, []), gt), context=[t for t, _ in turns.get(cid, [])], response=gt)
        for qid, gt, cid in batch
    ]
    try:
        results: list[Manipulation | str] = manipulator.manipulate(items)
    except Exception:  # find the question that fails; the others go on
        results = []
        for item in items:
            try:
                results.extend(manipulator.manipulate([item]))
            except Exception:
                results.append(traceback.format_exc()[-4000:])
    new_candidates, outcomes = [], []
    offered: dict[int, int] = {}  # question id -> new texts offered to the database
    made: dict[int, int] = {}  # question id -> negatives the masked LM made
    for (question_id, ground_truth, context_id), result in zip(batch, results, strict=True):
        if isinstance(result, str):
            outcomes.append(_outcome(question_id, run, GenerationOutcome.FAILED, job_id, error=result))
            continue
        truth, context = text_hash(ground_truth), {digest for _, digest in turns.get(context_id, [])}
        seen: set[str] = set()
        outcome = _outcome(
            question_id,
            run,
            GenerationOutcome(result.outcome),
            job_id,
            words=len(result.words),
            selected=len(result.selected),
            tokens=result.tokens,
            tokens_selected=result.tokens_selected,
        )
        made[question_id] = len(result.negatives)
        for negative in result.negatives:
            digest = text_hash(negative.text)
            if digest == truth:
                outcome.dropped_ground_truth += 1
            elif digest in context:
                outcome.dropped_context += 1
            elif digest in seen:
                outcome.dropped_repeated += 1
            else:
                seen.add(digest)
                new_candidates.append(_candidate(question_id, digest, negative, result, run))
        offered[question_id] = len(seen)  # the database refuses a text the question has
        outcomes.append(outcome)
        if result.outcome == GenerationOutcome.GENERATED:
            report["words"] += len(result.words)
            report["words_replaced"] += len(result.selected)
            report["tokens"] += result.tokens
            report["tokens_replaced"] += result.tokens_selected
    generated = Candidate.objects.filter(question_id__in=question_ids, source=CandidateSource.MLM_NEGATIVE)
    with transaction.atomic():
        before = dict(generated.values("question_id").annotate(n=Count("id")).values_list("question_id", "n"))
        Candidate.objects.bulk_create(new_candidates, ignore_conflicts=True)
        after = dict(generated.values("question_id").annotate(n=Count("id")).values_list("question_id", "n"))
        for outcome in outcomes:
            outcome.negatives_added = after.get(outcome.question_id, 0) - before.get(outcome.question_id, 0)
            outcome.dropped_existing = offered.get(outcome.question_id, 0) - outcome.negatives_added
            outcome.without_negative = _without_negative(outcome, made=made.get(outcome.question_id, 0))
        QuestionGeneration.objects.bulk_create(
            outcomes,
            update_conflicts=True,
            unique_fields=["question", "setup"],
            update_fields=[
                "outcome",
                "words",
                "selected",
                "negatives_added",
                "without_negative",
                "tokens",
                "tokens_selected",
                *DROP_REASONS,
                "error",
                "job",
                "updated_at",
            ],
        )
    for outcome in outcomes:
        report[outcome.outcome] += 1
        report["candidates_added"] += outcome.negatives_added
        report["questions_with_negative"] += 1 if outcome.negatives_added else 0
        if outcome.without_negative:
            report[f"without_negative_{outcome.without_negative}"] += 1
        for reason in DROP_REASONS:
            report[reason] += getattr(outcome, reason)
    # Negatives added to a question already open for annotation need scores too: its unit of work
    # is reopened (annotators who have not seen it yet score them; see docs/negatives.md).
    grown = [o.question_id for o in outcomes if o.negatives_added]
    for question_id in QuestionWork.objects.filter(question_id__in=grown).values_list("question_id", flat=True):
        work_refresh(question_id=question_id)
        report["in_annotation"] += 1


def _without_negative(outcome: QuestionGeneration, *, made: int) -> str:
    """Why the question received no negative ("" when it received one): its outcome when no word
    was selected, else what became of the negatives made (the first reason that applies)."""
    if outcome.negatives_added:
        return ""
    if outcome.outcome != GenerationOutcome.GENERATED:
        return outcome.outcome
    if not made:
        return "unchanged"  # every replacement came back as the original word (manipulation drops it)
    if outcome.dropped_ground_truth:
        return "ground_truth"
    if outcome.dropped_context:
        return "context"
    return "duplicate"


def _sample_key(turns: list[tuple[str, str]], ground_truth: str) -> int:
    """Seeds a question's samples from its texts, not its id: the same dialogue gets the same
    negatives for a seed in any database."""
    texts = "\n".join([*(text for text, _ in turns), ground_truth])
    return int(hashlib.sha256(texts.encode()).hexdigest()[:12], 16)


def _outcome(
    question_id, run, outcome, job_id, *, words=0, selected=0, tokens=0, tokens_selected=0, error=""
) -> QuestionGeneration:
    return QuestionGeneration(
        question_id=question_id,
        setup=run.setup,
        outcome=outcome,
        words=words,
        selected=selected,
        tokens=tokens,
        tokens_selected=tokens_selected,
        error=error,
        job_id=job_id,
    )


def _candidate(question_id: int, digest: str, negative, result: Manipulation, run: GenerationRun) -> Candidate:
    selected = set(result.selected)
    scores = [w for w in result.words if w.index in selected]
    return Candidate(
        question_id=question_id,
        text=negative.text,
        text_hash=digest,
        source=CandidateSource.MLM_NEGATIVE,
        retrieval_score=round(sum(w.score for w in scores) / len(scores), 4),  # mean score of the replaced words
        rank=negative.sample + 1,
        retriever_version=run.model_version[:200],
        provenance={
            "method": METHOD,
            "model": run.model,
            "model_version": run.model_version,
            **({"toy_model": True} if run.toy_model else {}),
            "setup": run.setup,
            **run.settings.describe(),
            "sample": negative.sample,
            "words": len(result.words),
            "selected": [{"position": w.index, "word": w.text, "score": round(w.score, 4)} for w in scores],
            "replacements": [
                {"position": r["word"], "original": r["original"], "replacement": r["replacement"]}
                for r in negative.replacements
            ],
        },
    )
