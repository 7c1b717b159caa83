"""Generating responses: one per context of a dataset, from a registered system (the ``generate`` job).

Resumable and idempotent like evaluations: contexts are answered in committed batches, a context
with a response is never answered again, and responses are unique per (generation, context key).
Every question of the dataset that is not derived gets one response (``context_key`` "q<id>", its
ground truth as the reference); decoding rules are in evaluation/scoring/generate.py.
"""

from django.db import transaction

from annotation.models import Dataset
from core.errors import UserError
from core.models import Job
from core.services.jobs import JobProgress
from evaluation.job_params import GenerateParams
from evaluation.metrics.diversity import distinct_n
from evaluation.models import DecodingStrategy, GeneratedResponse, Generation, System
from evaluation.scoring.backends import backend_for
from evaluation.scoring.decoding import Decoding, context_seed
from evaluation.scoring.generate import generator_for
from evaluation.selectors import (
    generation_contexts,
    generation_questions,
    pending_generation_questions,
    unanswered_questions,
)
from evaluation.services.evaluation_shards import context_order, evaluation_shard_size, generation_shards_plan
from evaluation.services.system_runs import (
    system_run_execute,
    system_run_is_stale,
    system_run_job_is_live,
    system_run_start,
)

GENERATED_STRATEGIES = (DecodingStrategy.GREEDY, DecodingStrategy.NUCLEUS)
PHASE = "generating responses"


def generation_start(
    *,
    system_name: str,
    dataset_name: str,
    strategy: str = DecodingStrategy.GREEDY,
    top_p: float = 0.9,
    temperature: float = 1.0,
    max_new_tokens: int = 40,
    seed: int = 0,
    created_by=None,
    enqueue: bool = True,
    batch_size: int = GenerateParams.default("batch_size"),
    device: str | None = None,
) -> tuple[Generation, Job | None]:
    """The generation of a system on a dataset, with a job to run or resume it.

    A finished generation of an unchanged system with the same decoding and no new question is
    returned as is (no job). Responses of a system edited since, or decoded otherwise, are deleted first.
    """
    system = System.objects.filter(name=system_name).first()
    if system is None:
        raise UserError(f"no system {system_name!r}")
    dataset = Dataset.objects.filter(name=dataset_name).first()
    if dataset is None:
        raise UserError(f"no dataset {dataset_name!r}")
    check_can_generate(system)
    _decoding(strategy, top_p, temperature, max_new_tokens)  # refuse bad values before writing anything
    if batch_size < 1:
        raise UserError(f"batch size must be at least 1, not {batch_size}")
    params = {"strategy": strategy, "top_p": top_p, "temperature": temperature, "max_new_tokens": max_new_tokens}
    with transaction.atomic():
        generation, _ = Generation.objects.select_for_update().get_or_create(
            system=system, dataset=dataset, defaults={**params, "seed": seed}
        )
        changed = _decoding_key(generation) != _decoding_key(Generation(**params, seed=seed))
        if system_run_job_is_live(run=generation) and (changed or system_run_is_stale(run=generation, system=system)):
            raise UserError(
                f"generation job #{generation.job_id} is still running: cancel it before changing "
                "the decoding or the system"
            )
        job = system_run_start(
            run=generation,
            system=system,
            params=GenerateParams(generation_id=generation.pk, batch_size=batch_size, device=device),
            created_by=created_by,
            enqueue=enqueue,
            results_discard=lambda: _responses_discard(generation),
            is_complete=lambda: not unanswered_questions(generation=generation).exists(),
            changed=changed,
            updates={**params, "seed": seed},
        )
    return generation, job


def _responses_discard(generation: Generation) -> None:
    _refuse_if_rated(generation)
    generation.responses.all().delete()


def check_can_generate(system: System) -> None:
    """A checkpoint generates; a plugin only with a generate(contexts) method; an external system never."""
    backend_for(system).check_can_generate(system)


def generation_run(
    *,
    generation_id: int,
    progress: JobProgress | None = None,
    batch_size: int = GenerateParams.default("batch_size"),
    device: str | None = None,
    job: Job | None = None,
) -> dict:
    """Answer every context that has no response yet, then summarise. Returns the summary.

    With its ``job`` (and the job's progress), the contexts are answered in shards that any worker
    on the job's queue may run (generation_shard_generate); without, here in one piece. Either
    way the summary is computed from the stored responses."""
    generation = _generation_get(generation_id)
    check_can_generate(generation.system)
    size = evaluation_shard_size(batch_questions=batch_size)
    return system_run_execute(
        run=generation,
        job=job,
        progress=progress,
        plan=lambda: generation_shards_plan(generation=generation, size=size),
        phase=PHASE,
        unit="contexts",
        run_in_one_piece=lambda: _generate_pending(generation, progress=progress, batch_size=batch_size, device=device),
        summarise=lambda: generation_summary(generation=generation),
    )


def generation_shard_generate(
    *,
    generation_id: int,
    question_ids: list[int],
    batch_size: int,
    device: str | None = None,
    progress=None,
) -> dict:
    """One shard of a generation job: answer the contexts of ``question_ids`` (in that order, the
    plan's) that have no response yet, in committed batches. Returns its counts."""
    generation = _generation_get(generation_id)
    check_can_generate(generation.system)
    total, done = len(question_ids), 0
    report = {"contexts": total, "skipped_finished": 0, "answered": 0}
    if progress:
        progress.update(done=done, total=total, force=True, phase=PHASE, unit="contexts")
    generate = None
    for start in range(0, total, batch_size):
        block = question_ids[start : start + batch_size]
        pending = generation_contexts(generation=generation, question_ids=block)
        if pending:
            generate = generate or _generator(generation, batch_size=batch_size, device=device)
            order = {question_id: n for n, question_id in enumerate(block)}
            generate(sorted(pending, key=lambda q: order[q["id"]]))
        report["skipped_finished"] += len(block) - len(pending)
        report["answered"] += len(pending)
        done += len(block)
        if progress:
            progress.update(done=done, total=total, force=True)
    return report


def _generation_get(generation_id: int) -> Generation:
    generation = Generation.objects.select_related("system", "dataset").filter(pk=generation_id).first()
    if generation is None:
        raise UserError(f"no generation #{generation_id}")
    if generation.dataset_id is None:
        raise UserError(f"generation #{generation_id} was imported from {generation.source_file}: nothing to generate")
    return generation


def _generate_pending(generation: Generation, *, progress, batch_size: int, device: str | None) -> None:
    total = generation_questions(generation=generation).count()
    pending = pending_generation_questions(generation=generation)
    done = total - len(pending)
    if progress:
        progress.update(done=done, total=total, force=True, phase=PHASE, unit="contexts")
    if not pending:
        return
    generate = _generator(generation, batch_size=batch_size, device=device)
    pending.sort(key=context_order)
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        generate(batch)
        done += len(batch)
        if progress:
            progress.update(done=done, total=total, force=True)


def _generator(generation: Generation, *, batch_size: int, device: str | None):
    """``generate(batch)``: answer one batch of contexts and commit their responses."""
    decoding = _decoding(generation.strategy, generation.top_p, generation.temperature, generation.max_new_tokens)
    generator = generator_for(generation.system, device=device, batch_size=batch_size)  # loaded once per worker

    def generate(batch: list[dict]) -> None:
        # one seed per context, from its key: a response does not depend on its batch or shard
        seeds = [context_seed(generation.seed, q["key"]) for q in batch] if decoding.strategy == "nucleus" else None
        responses = generator.generate([q["turns"] for q in batch], decoding=decoding, seeds=seeds)
        with transaction.atomic():
            GeneratedResponse.objects.bulk_create(
                [
                    GeneratedResponse(
                        generation=generation,
                        question_id=q["id"],
                        context_key=q["key"],
                        context=q["turns"],
                        references=[q["ground_truth"]],
                        # a sampled byte-level token can decode to NUL, which PostgreSQL text refuses
                        text=response.text.replace("\x00", ""),
                        n_tokens=response.n_tokens,
                    )
                    for q, response in zip(batch, responses, strict=True)
                ],
                ignore_conflicts=True,  # a context another worker answered keeps its response
            )

    return generate


def generation_summary(*, generation: Generation) -> dict:
    """How many responses, how long (system tokens and words) and how diverse (distinct-1/2)."""
    responses = GeneratedResponse.objects.filter(generation=generation).order_by("context_key", "id")
    rows = list(responses.values_list("text", "n_tokens"))
    texts = [text for text, _ in rows]
    counted = [n for _, n in rows if n is not None]
    return {
        "system": generation.system.name,
        "dataset": generation.dataset.name if generation.dataset_id else None,
        "strategy": generation.strategy,
        "responses": len(rows),
        "empty_responses": sum(not text for text in texts),
        "mean_tokens": sum(counted) / len(counted) if counted else None,
        "mean_words": sum(len(text.split()) for text in texts) / len(texts) if texts else None,
        "distinct_1": distinct_n(texts, 1),
        "distinct_2": distinct_n(texts, 2),
    }


def _decoding(strategy: str, top_p: float, temperature: float, max_new_tokens: int) -> Decoding:
    if strategy not in GENERATED_STRATEGIES:
        raise UserError(f"strategy must be greedy or nucleus, not {strategy!r}")
    if not 0 < top_p <= 1:
        raise UserError(f"top-p must be in (0, 1], not {top_p}")
    if not temperature > 0:
        raise UserError(f"temperature must be positive, not {temperature}")
    if not 1 <= max_new_tokens <= 32767:
        raise UserError(f"max new tokens must be between 1 and 32767, not {max_new_tokens}")
    return Decoding(strategy=strategy, top_p=top_p, temperature=temperature, max_new_tokens=max_new_tokens)


def _decoding_key(generation: Generation) -> tuple:
    """What the responses depend on: greedy ignores top-p, temperature and seed."""
    if generation.strategy == DecodingStrategy.NUCLEUS:
        return (
            generation.strategy,
            generation.max_new_tokens,
            generation.top_p,
            generation.temperature,
            generation.seed,
        )
    return (generation.strategy, generation.max_new_tokens)


def _refuse_if_rated(generation: Generation) -> None:
    sent = generation.responses.filter(candidate__isnull=False).count()
    if sent:
        raise UserError(
            f"{sent} responses of generation #{generation.pk} were sent to annotators: regenerating would "
            "orphan their ratings; register the changed system under a new name instead"
        )
