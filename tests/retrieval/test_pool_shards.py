"""The pool job in shards: two real worker processes share one job, and the pools are exactly those
of a run in one process (texts, utterances, sources, ranks, scores and recorded exclusions)."""

from pathlib import Path

import pytest

from annotation.models import Candidate, Repository
from annotation.services.dialogue_import import dialogues_import
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.jobs import JobProgress, job_create, job_execute
from retrieval.dense.encoder import get_encoder
from retrieval.job_params import BuildPoolsParams
from retrieval.models import IndexKind, IndexStatus, PoolStatus, QuestionRetrieval, RetrievalIndex
from retrieval.services.indexing import embeddings_build, lexical_index_build
from retrieval.services.job_handlers import build_pools
from retrieval.services.pool_shards import pool_reports_merge, pool_shards_plan
from retrieval.services.pool_targets import pools_target_get
from retrieval.services.pools import PoolSettings, pools_build
from retrieval.services.repository_import import repository_import
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers

pytestmark = pytest.mark.slow

# Random encoder weights make most texts look alike: no paraphrase filter.
NO_PARAPHRASE = 1.0


def two_datasets(folder: Path, n: int, *, repository: int) -> None:
    """A repository, and one dialogue file imported twice: datasets "reference" and "sharded"."""
    path = folder / "repository.txt"
    path.write_text("\n".join(sentences(repository, seed=10)) + "\n")
    repository_import(path=path, name="subtitles")
    turns = sentences(4 * n, seed=11)
    dialogues = folder / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "sharded"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)


def pools(dataset: str, *, versions: bool = True) -> list[tuple]:
    """Every false candidate of the dataset by its question's line: utterance, text, source, rank,
    score (exact) and what each retriever found (without the index versions it found them in, with
    ``versions`` False); and every question's recorded exclusions."""
    candidates = Candidate.objects.filter(question__dataset__name=dataset, is_ground_truth=False).values_list(
        "question__context__source_line", "utterance_id", "text", "source", "rank", "retrieval_score", "retrieval"
    )
    if not versions:
        candidates = [
            (*rest, [{k: v for k, v in found.items() if k != "version"} for found in retrieval])
            for *rest, retrieval in candidates
        ]
    exclusions = QuestionRetrieval.objects.filter(question__dataset__name=dataset).values_list(
        "question__context__source_line", "status", "pool_size", "exclusions"
    )
    return sorted((line, *(repr(v) for v in rest)) for line, *rest in candidates) + sorted(
        (line, *(repr(v) for v in rest)) for line, *rest in exclusions
    )


@pytest.mark.django_db
def test_the_plan_cuts_the_questions_into_blocks_of_consecutive_ids(tiny_encoder, tmp_path):
    # given 10 questions and their indexes
    two_datasets(tmp_path, 10, repository=200)
    pools_build(dataset_name="reference", repository_name="subtitles", settings=PoolSettings(dense=0))
    lexical = RetrievalIndex.objects.get(kind=IndexKind.LEXICAL).pk
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE).pk
    target = pools_target_get(
        dataset_name="sharded", repository_name="subtitles", lexical_index_id=lexical, dense_index_id=dense
    )
    # when they are planned in shards of 4
    plan = pool_shards_plan(target=target, size=4)
    # then three shards cover every question once, in id order, with the indexes to search
    ids = list(target.dataset.questions.filter(derived_from__isnull=True).order_by("id").values_list("id", flat=True))
    assert [(s.params["first_id"], s.params["last_id"], s.total) for s in plan] == [
        (ids[0], ids[3], 4),
        (ids[4], ids[7], 4),
        (ids[8], ids[9], 2),
    ]
    assert {(s.params["lexical_index"], s.params["dense_index"]) for s in plan} == {(lexical, dense)}


def test_the_shards_reports_add_up_to_the_jobs():
    reports = [
        {"dataset": "d", "repository": "r", "questions": 4, "built": 3, "failed": 1, "skipped_finished": 0},
        {"dataset": "d", "repository": "r", "questions": 2, "built": 0, "failed": 0, "skipped_finished": 2},
    ]
    merged = pool_reports_merge(reports)
    assert merged["dataset"] == "d" and (merged["questions"], merged["built"], merged["skipped_finished"]) == (6, 3, 2)


@pytest.mark.django_db
def test_a_pool_job_run_in_shards_here_builds_the_pools_of_a_run_in_one_piece(tiny_encoder, tmp_path, settings):
    # given the same questions twice, and pools built for the first in one piece
    two_datasets(tmp_path, 30, repository=400)
    pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=NO_PARAPHRASE)
    )
    # when the second's pool job runs in shards of 7 questions (eager: this worker runs them all)
    settings.WELLCHOSEN_JOB_SHARD_SIZE = 7
    params = BuildPoolsParams(dataset="sharded", repository="subtitles", paraphrase_threshold=NO_PARAPHRASE)
    job = job_create(params=params, enqueue=False)
    job_execute(job_id=job.pk)
    # then it ran 5 shards and built the very same pools
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert (job.result["built"], job.result["questions"], job.result["candidates_added"]) == (30, 30, 300)
    assert JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED).count() == 5
    assert pools("sharded") == pools("reference")
    assert job.phases[-1]["name"] == "retrieving candidates" and job.phases[-1]["done"] == 30


@pytest.mark.workers
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_pool_job_and_build_the_pools_of_one_worker(tiny_encoder, tmp_path, data_dir, monkeypatch):
    # given the same 600 questions twice, and pools built for the first in one piece, in this process
    n = 600
    two_datasets(tmp_path, n, repository=3_000)
    pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=NO_PARAPHRASE)
    )
    # and two worker processes on one queue, which split pool jobs into shards of 40 questions
    with two_workers(
        tmp_path=tmp_path,
        data_dir=data_dir,
        monkeypatch=monkeypatch,
        env={**tiny_encoder, "WELLCHOSEN_JOB_SHARD_SIZE": "40"},
    ) as pair:
        # when the second dataset's pool job is sent to them
        job = job_create(
            params=BuildPoolsParams(dataset="sharded", repository="subtitles", paraphrase_threshold=NO_PARAPHRASE),
            enqueue=False,
        )
        job = pair.run(job)
    # then the job succeeded, its 15 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=15)
    # and every pool is byte for byte the one-process run's: utterances, ranks, scores and exclusions
    assert pools("sharded") == pools("reference")
    assert (job.result["built"], job.result["candidates_added"]) == (n, 10 * n)
    retrievals = QuestionRetrieval.objects.filter(question__dataset__name="sharded")
    assert retrievals.filter(status=PoolStatus.DONE).count() == n


def pool_job_on_a_repository_without_indexes(tmp_path, settings) -> Job:
    """20 questions twice ("reference", "sharded") and a repository of 400 utterances without
    indexes; the pool job of "sharded" run here (eager), encoding in shards of 64 utterances and
    retrieving in shards of 7 questions."""
    two_datasets(tmp_path, 20, repository=400)
    settings.WELLCHOSEN_ENCODING_SHARD_SIZE, settings.WELLCHOSEN_JOB_SHARD_SIZE = 64, 7
    params = BuildPoolsParams(dataset="sharded", repository="subtitles", paraphrase_threshold=NO_PARAPHRASE)
    job = job_create(params=params, enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    return job


@pytest.mark.django_db
def test_a_pool_job_without_a_dense_index_encodes_it_in_shards_first(tiny_encoder, tmp_path, settings, monkeypatch):
    # given a repository without indexes, when a pool job runs on it
    job = pool_job_on_a_repository_without_indexes(tmp_path, settings)
    # then it encoded the repository in 7 shards of the stage "encoding", then its questions in 3 shards
    shards = JobShard.objects.filter(job=job).order_by("id")
    assert [(s.stage, s.number, s.status) for s in shards] == [
        *[("encoding", n, JobShardStatus.SUCCEEDED) for n in range(7)],
        *[("", n, JobShardStatus.SUCCEEDED) for n in range(3)],
    ]
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (dense.status, dense.job_id, dense.utterance_count) == (IndexStatus.READY, job.pk, 400)
    assert [p["name"] for p in job.phases] == [
        "building the lexical index",
        "encoding utterances",
        "building the vector index",
        "retrieving candidates",
    ]
    assert job.phases[1]["done"] == job.phases[1]["total"] == 400 and job.phases[3]["done"] == 20
    # and its pools are those of a run whose indexes were built first, in one piece (64 texts a call, as the shards)
    repository = Repository.objects.get(name="subtitles")
    lexical_index_build(repository=repository)
    monkeypatch.setattr(get_encoder(), "chunk", 64)
    embeddings_build(repository=repository)
    pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=NO_PARAPHRASE)
    )
    assert RetrievalIndex.objects.filter(kind=IndexKind.DENSE).exclude(job=job).count() == 1
    assert pools("sharded", versions=False) == pools("reference", versions=False)


@pytest.mark.django_db
def test_a_pool_job_taken_over_after_its_encoding_goes_on_with_that_version(
    tiny_encoder, tmp_path, settings, monkeypatch
):
    # given a pool job whose encoding shards all succeeded, taken over before its version was ready
    job = pool_job_on_a_repository_without_indexes(tmp_path, settings)
    RetrievalIndex.objects.filter(kind=IndexKind.DENSE).update(status=IndexStatus.BUILDING)
    JobShard.objects.filter(job=job, stage="").delete()
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, attempts=2)
    job.refresh_from_db()

    def encode(texts):
        pytest.fail("encoded again")

    monkeypatch.setattr(get_encoder(), "encode", encode)
    # when the attempt that took it over runs the pool job's handler
    result = build_pools(BuildPoolsParams.from_json(job.params), job, JobProgress(job))
    # then it went on with the version its shards wrote, encoding nothing again, and planned its questions
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (dense.status, dense.job_id) == (IndexStatus.READY, job.pk)
    encoding = JobShard.objects.filter(job=job, stage="encoding")
    assert set(encoding.values_list("status", "attempts")) == {(JobShardStatus.SUCCEEDED, 1)}
    assert JobShard.objects.filter(job=job, stage="").count() == 3
    assert (result["questions"], result["skipped_finished"]) == (20, 20)
