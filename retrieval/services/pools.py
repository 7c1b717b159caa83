"""Candidate pools (Sato et al. §3.1): for every question, M utterances related to its ground
truth, retrieved lexically (BM25) and by embedding similarity so that the pool is diverse.

Resumable and idempotent: questions are processed in committed batches, a question with a
finished pool is skipped, candidates are unique per question and text, and a failing
question is recorded on its QuestionRetrieval row instead of stopping the job.
"""

import traceback
from collections.abc import Callable

from django.db import transaction

from annotation.models import Candidate, Repository, Turn, Utterance
from annotation.selectors import testset_dataset_get
from annotation.services.attention_checks import dataset_check_repository_adopt
from core.errors import UserError
from core.services.jobs import JobProgress
from retrieval.dense.encoder import get_encoder
from retrieval.models import PoolStatus, QuestionRetrieval, RetrievalIndex
from retrieval.selectors import dense_index_for, lexical_backend_for
from retrieval.services.exclusions import excluded_hashes
from retrieval.services.indexing import indexes_ensure
from retrieval.services.pool_choice import PoolSettings, pool_candidate, pool_choose
from retrieval.services.pool_targets import PoolTarget, pool_questions


def pool_sizes_check(*, lexical: int, dense: int) -> None:
    """How many candidates each retriever adds to a pool: none negative, at least one in all."""
    if lexical < 0 or dense < 0 or lexical + dense < 1:
        raise UserError(
            "Ask for at least one candidate per question: lexical (BM25) and dense (embedding) candidates "
            f"are 0 or more and add up to at least 1, not {lexical} and {dense}"
        )


def pools_build(
    *,
    dataset_name: str,
    repository_name: str,
    settings: PoolSettings = PoolSettings(),
    exclude_datasets: list[str] | None = None,
    batch_size: int = 128,
    progress: JobProgress | None = None,
    job_id: int | None = None,
) -> dict:
    """Pools for every original question of the dataset, in this process (the pool job splits the
    questions into shards instead: retrieval.services.pool_shards)."""
    target = pools_prepare(
        dataset_name=dataset_name, repository_name=repository_name, settings=settings, progress=progress, job_id=job_id
    )
    return pools_build_questions(
        target=target,
        settings=settings,
        exclude_datasets=exclude_datasets,
        batch_size=batch_size,
        progress=progress,
        job_id=job_id,
    )


def pools_prepare(
    *,
    dataset_name: str,
    repository_name: str,
    settings: PoolSettings,
    progress: JobProgress | None = None,
    job_id: int | None = None,
    dense_build: Callable[[Repository], RetrievalIndex] | None = None,
) -> PoolTarget:
    """The part of a pool build that does not divide: the checks, the dataset's attention-check
    repository, and the indexes (built when missing or stale; ``dense_build``: see indexes_ensure)."""
    dataset = testset_dataset_get(name=dataset_name, adds="retrieved candidates")
    repository = Repository.objects.filter(name=repository_name).first()
    if repository is None:
        raise UserError(f"no repository {repository_name!r}")
    pool_sizes_check(lexical=settings.lexical, dense=settings.dense)
    # The attention checks of a dataset come from the repository of its candidates, unless one was chosen.
    dataset_check_repository_adopt(dataset=dataset, repository=repository)
    lexical_index, dense_index = indexes_ensure(
        repository=repository, progress=progress, job_id=job_id, dense_build=dense_build
    )
    return PoolTarget(dataset, repository, lexical_index, dense_index)


def pools_build_questions(
    *,
    target: PoolTarget,
    settings: PoolSettings = PoolSettings(),
    exclude_datasets: list[str] | None = None,
    first_id: int | None = None,
    last_id: int | None = None,
    batch_size: int = 128,
    progress: JobProgress | None = None,
    job_id: int | None = None,
) -> dict:
    """Pools for the target's questions (those from ``first_id`` to ``last_id``, or all), in
    committed batches, skipping questions whose pool is done. A question's pool depends on that
    question alone, so any split of the questions gives the same pools."""
    repository = target.repository
    lexical, dense = lexical_backend_for(target.lexical_index), dense_index_for(target.dense_index)
    encoder = get_encoder()
    dense_name = target.dense_index.name.rsplit("/", 1)[-1]
    versions = {"lexical": lexical.describe(), "dense": f"{encoder.name}:{dense_name}"}
    excluded = excluded_hashes(exclude_datasets or [])

    questions = pool_questions(target=target, first_id=first_id, last_id=last_id)
    finished = QuestionRetrieval.objects.filter(repository=repository, status=PoolStatus.DONE).values("question_id")
    pending = questions.exclude(id__in=finished).order_by("id")
    total = questions.count()
    report = {
        "dataset": target.dataset.name,
        "repository": repository.name,
        "questions": total,
        "skipped_finished": total - pending.count(),
        "built": 0,
        "failed": 0,
        "candidates_added": 0,
        "short_pools": 0,
        "lexical_index": versions["lexical"],
        "dense_index": versions["dense"],
    }
    done = report["skipped_finished"]
    if progress:
        progress.update(done=done, total=total, force=True, phase="retrieving candidates", unit="questions")
    last_seen = 0
    while True:
        batch = list(pending.filter(id__gt=last_seen).values_list("id", "ground_truth", "context_id")[:batch_size])
        if not batch:
            break
        last_seen = batch[-1][0]
        _build_batch(
            batch,
            repository=repository,
            settings=settings,
            lexical=lexical,
            dense=dense,
            encoder=encoder,
            versions=versions,
            excluded=excluded,
            report=report,
            job_id=job_id,
        )
        done += len(batch)
        if progress:
            progress.update(done=done, total=total, failed=report["failed"], force=True)
    return report


def _build_batch(
    batch, *, repository, settings: PoolSettings, lexical, dense, encoder, versions, excluded, report, job_id
) -> None:
    question_ids = [qid for qid, _, _ in batch]
    ground_truths = [gt for _, gt, _ in batch]
    context_hashes: dict[int, set[str]] = {}
    for context_id, digest in Turn.objects.filter(context_id__in={c for _, _, c in batch}).values_list(
        "context_id", "text_hash"
    ):
        context_hashes.setdefault(context_id, set()).add(digest)
    gt_hashes = dict(
        Candidate.objects.filter(question_id__in=question_ids, is_ground_truth=True).values_list(
            "question_id", "text_hash"
        )
    )
    lexical_hits = lexical.search(ground_truths, k=settings.fetch) if settings.lexical else [[] for _ in batch]
    # One query per encoder run: the int8 model quantizes each run's activations as a whole, so a
    # text's vector would depend on the texts beside it (measured: a cosine of 0.987 to itself) and
    # the pools on how the questions were batched. Alone, it costs ~10 % more on a few queries.
    query_vectors = encoder.encode(ground_truths, batch_size=1)
    dense_scores, dense_ids = dense.search(query_vectors, k=settings.fetch) if settings.dense else (None, None)

    wanted = {h.utterance_id for hits in lexical_hits for h in hits}
    if dense_ids is not None:
        wanted.update(int(i) for i in dense_ids.ravel() if i >= 0)
    utterances = _utterances(wanted)
    vectors = dict(zip(sorted(wanted), dense.store.vectors_for(sorted(wanted)), strict=True)) if wanted else {}

    new_candidates, outcomes = [], []
    for row, (question_id, _, context_id) in enumerate(batch):
        try:
            blocked = {gt_hashes.get(question_id), *context_hashes.get(context_id, ())}
            ranked = {
                "lexical": [(h.utterance_id, h.score, rank) for rank, h in enumerate(lexical_hits[row], start=1)],
                "dense": []
                if dense_ids is None
                else [
                    (int(i), float(s), rank)
                    for rank, (i, s) in enumerate(zip(dense_ids[row], dense_scores[row], strict=True), start=1)
                    if i >= 0
                ],
            }
            pool, exclusions = pool_choose(
                ranked,
                utterances=utterances,
                vectors=vectors,
                query=query_vectors[row],
                blocked=blocked,
                excluded=excluded,
                settings=settings,
                versions=versions,
                ground_truth_hash=gt_hashes.get(question_id),
                ground_truth=ground_truths[row],
            )
            new_candidates.extend(pool_candidate(question_id, choice) for choice in pool)
            outcomes.append(
                QuestionRetrieval(
                    question_id=question_id,
                    repository=repository,
                    status=PoolStatus.DONE,
                    pool_size=len(pool),
                    exclusions=exclusions,
                    job_id=job_id,
                )
            )
            report["short_pools"] += len(pool) < settings.size
        except Exception:  # one bad question must not stop the job
            outcomes.append(
                QuestionRetrieval(
                    question_id=question_id,
                    repository=repository,
                    status=PoolStatus.FAILED,
                    error=traceback.format_exc()[-4000:],
                    job_id=job_id,
                )
            )
    with transaction.atomic():
        before = Candidate.objects.filter(question_id__in=question_ids).count()
        Candidate.objects.bulk_create(new_candidates, ignore_conflicts=True)
        added = Candidate.objects.filter(question_id__in=question_ids).count() - before
        QuestionRetrieval.objects.bulk_create(
            outcomes,
            update_conflicts=True,
            unique_fields=["question", "repository"],
            update_fields=["status", "pool_size", "error", "exclusions", "job", "updated_at"],
        )
    report["candidates_added"] += added
    report["built"] += sum(o.status == PoolStatus.DONE for o in outcomes)
    report["failed"] += sum(o.status == PoolStatus.FAILED for o in outcomes)


def _utterances(ids: set[int]) -> dict[int, tuple]:
    found: dict[int, tuple] = {}
    ordered = sorted(ids)
    for start in range(0, len(ordered), 5000):  # SQLite limits query parameters
        for row in Utterance.objects.filter(id__in=ordered[start : start + 5000]).values_list(
            "id", "text", "text_hash", "n_tokens"
        ):
            found[row[0]] = row
    return found
