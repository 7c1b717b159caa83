"""Retrieval jobs killed mid-run: candidate pools resume from their committed batches and end equal
to a run that was never killed; an encoding in shards encodes again the shard it was killed in, and
its store is that of a run never killed."""

import time
from pathlib import Path

import numpy as np
import pytest

from annotation.models import Candidate, Repository, Utterance
from annotation.services.dialogue_import import dialogues_import
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_create
from retrieval.dense.store import EmbeddingStore
from retrieval.job_params import BuildIndexesParams, BuildPoolsParams
from retrieval.models import IndexKind, IndexStatus, PoolStatus, QuestionRetrieval, RetrievalIndex
from retrieval.selectors import dense_index_for
from retrieval.services.indexing import embeddings_build, lexical_index_build
from retrieval.services.pools import PoolSettings, pools_build
from retrieval.services.repository_import import repository_import
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over
from tests.worker_helpers import HANG_GUARD_S, wait_finished

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def import_repository(folder: Path, n: int) -> None:
    path = folder / "repository.txt"
    path.write_text("\n".join(sentences(n, seed=10)) + "\n")
    repository_import(path=path, name="subtitles")


def pools(dataset: str) -> dict[int, list[tuple]]:
    """Each question's pool, by its line in the imported file: (text hash, retriever, rank) of its candidates."""
    rows = Candidate.objects.filter(question__dataset__name=dataset, is_ground_truth=False).values_list(
        "question__context__source_line", "text_hash", "source", "rank"
    )
    found: dict[int, list[tuple]] = {}
    for line, *candidate in rows:
        found.setdefault(line, []).append(tuple(candidate))
    return {line: sorted(candidates) for line, candidates in found.items()}


def reference_and_job(folder: Path, n: int) -> tuple[dict, Job]:
    """A repository with its indexes, and one dialogue file of ``n`` questions imported twice: a
    reference dataset whose pools are built here without interruption, and the dataset of the
    pool job returned (not sent)."""
    import_repository(folder, 3_000)
    turns = sentences(4 * n, seed=11)
    dialogues = folder / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    # (the tiny encoder's random weights make most texts look alike: no paraphrase filter)
    reference = pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=1.0)
    )
    job = job_create(
        params=BuildPoolsParams(dataset="killed", repository="subtitles", paraphrase_threshold=1.0), enqueue=False
    )
    return reference, job


def assert_pools_complete(n: int, reference: dict) -> None:
    """Every pool is the one a run never killed built: no candidate lost, none twice."""
    assert pools("killed") == pools("reference")
    candidates = Candidate.objects.filter(question__dataset__name="killed", is_ground_truth=False)
    assert candidates.count() == reference["candidates_added"] == 10 * n
    assert candidates.values("question", "text_hash").distinct().count() == 10 * n
    retrievals = QuestionRetrieval.objects.filter(question__dataset__name="killed")
    assert (retrievals.count(), retrievals.filter(status=PoolStatus.DONE).count()) == (n, n)


def test_pools_killed_mid_dataset_resume_and_end_equal_to_a_run_never_killed(cluster, tiny_encoder, tmp_path):
    # given a pool job of 1,200 questions in shards of 300, and a reference built without interruption
    n = 1_200
    reference, job = reference_and_job(tmp_path, n)
    cluster.env["WELLCHOSEN_JOB_SHARD_SIZE"] = "300"
    indexes = RetrievalIndex.objects.count()
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionRetrieval.objects.filter(
            question__dataset__name="killed", status=PoolStatus.DONE
        ).count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    # when its only worker is killed part-way through the questions and a second worker takes it over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then the job kept its plan and built only the questions the first worker had not committed:
    # its shards' reports add up to every question once, the committed ones skipped
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 4 and set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    assert job.result["built"] + job.result["skipped_finished"] == n
    assert job.result["skipped_finished"] <= kept["done"]
    assert_pools_complete(n, reference)
    assert RetrievalIndex.objects.count() == indexes  # the indexes were used, not rebuilt


def test_a_worker_killed_mid_shard_loses_that_shards_uncommitted_work_only(cluster, tiny_encoder, tmp_path):
    # given a pool job of 1,200 questions in shards of 300 on two workers
    n = 1_200
    reference, job = reference_and_job(tmp_path, n)
    cluster.env["WELLCHOSEN_JOB_SHARD_SIZE"] = "300"
    workers = [cluster.start_worker("one"), cluster.start_worker("two")]
    cluster.enqueue(job)
    # when the worker that does not hold the job is killed in the middle of a shard, with part of it committed
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        holders = [w for w in workers if "core.tasks.run_job[" in w.log_text()]
        if holders:
            (holder,) = holders
            helper = next(w for w in workers if w is not holder)
            shard = JobShard.objects.filter(
                job=job, status=JobShardStatus.RUNNING, worker__endswith=f":{helper.process.pid}", done_count__gt=0
            ).first()
            if shard is not None and shard.done_count <= shard.total_count - 128:  # a batch of 128 or more to go
                break
        if Job.objects.get(pk=job.pk).is_finished or time.monotonic() > deadline:
            logs = "\n".join(w.log_text() for w in workers)
            pytest.fail(f"no shard of the helper worker was caught mid-way:\n{logs}")
        time.sleep(0.05)
    helper.kill()
    reported = shard.done_count
    committed = QuestionRetrieval.objects.filter(
        question__dataset__name="killed",
        question__id__range=(shard.params["first_id"], shard.params["last_id"]),
        status=PoolStatus.DONE,
    ).count()
    # then the job's own worker took that shard over and finished the job, never taken over itself
    job = wait_finished(job.pk)
    assert (job.status, job.attempts) == (JobStatus.SUCCEEDED, 1), job.error
    shard.refresh_from_db()
    assert (shard.status, shard.attempts) == (JobShardStatus.SUCCEEDED, 2)
    assert shard.worker.endswith(f":{holder.process.pid}")
    # and the second attempt skipped what the killed one had committed, and built the rest
    assert shard.result["skipped_finished"] == committed >= reported > 0
    assert shard.result["built"] == shard.total_count - committed
    assert_pools_complete(n, reference)


def test_an_encoding_killed_mid_shard_encodes_that_shard_again_and_writes_the_store_of_one_piece(
    cluster, tiny_encoder, tmp_path
):
    # given a repository of 30,000 utterances, encoded in shards of 8,192 (one chunk of the encoder each)
    n = 30_000
    import_repository(tmp_path, n)
    cluster.env["WELLCHOSEN_ENCODING_SHARD_SIZE"] = "8192"
    job = job_create(params=BuildIndexesParams(repository="subtitles", kinds=["dense"]), enqueue=False)
    at_kill: dict[str, list] = {}

    def shards_at_kill() -> None:
        shards = JobShard.objects.filter(job=job)
        at_kill["done"] = list(shards.filter(status=JobShardStatus.SUCCEEDED).values_list("number", "worker"))
        at_kill["running"] = list(shards.filter(status=JobShardStatus.RUNNING).values_list("number", flat=True))

    # when its worker is killed once a shard is done, and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=shards_at_kill)
    # then the job succeeded once and its four shards too
    assert_succeeded_once(job)
    shards = {s.number: s for s in JobShard.objects.filter(job=job)}
    assert sorted(shards) == [0, 1, 2, 3] and {s.status for s in shards.values()} == {JobShardStatus.SUCCEEDED}
    # and the shards done before the kill were not encoded again; the one running then was, on the second worker
    assert at_kill["done"] and len(at_kill["running"]) <= 1
    for number, worker in at_kill["done"]:
        assert (shards[number].attempts, shards[number].worker) == (1, worker)
    first_worker = at_kill["done"][0][1]
    for number in at_kill["running"]:
        assert shards[number].attempts == 2 and shards[number].worker != first_worker
    # and the job went on with the version it began: one embedding index, ready, of every utterance once
    ready = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (ready.status, ready.job_id, ready.utterance_count) == (IndexStatus.READY, job.pk, n)
    assert job.result["dense"]["name"] == ready.name
    store = EmbeddingStore(Path(ready.name) / "store")
    ids = list(Utterance.objects.filter(repository__name="subtitles").order_by("id").values_list("id", flat=True))
    assert store.meta.count == n and np.asarray(store.ids).tolist() == ids
    # and its search index answers from the whole store (each end finds itself)
    ends = [ids[0], ids[-1]]
    index = dense_index_for(ready)
    assert index.search(index.vectors_for(ends), k=1)[1][:, 0].tolist() == ends
    # and its store is byte for byte that of a build in one piece, never killed
    whole = embeddings_build(repository=Repository.objects.get(name="subtitles"))
    for name in ("ids.npy", "vectors.bin", "meta.json"):
        assert (Path(ready.name) / "store" / name).read_bytes() == (Path(whole.name) / "store" / name).read_bytes()


def test_a_pool_job_killed_mid_encoding_goes_on_with_its_version_and_builds_the_pools_of_indexes_built_first(
    cluster, tiny_encoder, tmp_path
):
    # given a repository of 30,000 utterances without indexes, and one dialogue file of 200 questions imported twice
    n = 200
    import_repository(tmp_path, 30_000)
    turns = sentences(4 * n, seed=11)
    dialogues = tmp_path / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    # and a pool job of the second, which encodes the repository in shards of 8,192 (stage "encoding")
    cluster.env |= {"WELLCHOSEN_ENCODING_SHARD_SIZE": "8192", "WELLCHOSEN_JOB_SHARD_SIZE": "100"}
    job = job_create(
        params=BuildPoolsParams(dataset="killed", repository="subtitles", paraphrase_threshold=1.0), enqueue=False
    )
    encoding = JobShard.objects.filter(job=job, stage="encoding")
    at_kill: dict[str, list] = {}

    def mid_encoding() -> bool:
        statuses = set(encoding.values_list("status", flat=True))
        return {JobShardStatus.SUCCEEDED, JobShardStatus.RUNNING} <= statuses

    def shards_at_kill() -> None:
        at_kill["done"] = list(encoding.filter(status=JobShardStatus.SUCCEEDED).values_list("number", flat=True))
        at_kill["running"] = list(encoding.filter(status=JobShardStatus.RUNNING).values_list("number", flat=True))

    # when its worker is killed once an encoding shard is done and another runs, and a second worker takes it over
    job = kill_mid_job_and_take_over(job, cluster, kill_at=0, kill_when=mid_encoding, after_kill=shards_at_kill)
    # then the job succeeded once, its encoding shards done before the kill not encoded again
    assert_succeeded_once(job)
    shards = {s.number: s for s in encoding}
    assert sorted(shards) == [0, 1, 2, 3] and {s.status for s in shards.values()} == {JobShardStatus.SUCCEEDED}
    assert at_kill["done"] and at_kill["running"]
    assert all(shards[number].attempts == 1 for number in at_kill["done"])
    assert all(shards[number].attempts == 2 for number in at_kill["running"])
    questions = JobShard.objects.filter(job=job, stage="")
    assert set(questions.values_list("number", "status")) == {
        (0, JobShardStatus.SUCCEEDED),
        (1, JobShardStatus.SUCCEEDED),
    }
    # and it went on with the version it began: one embedding version, ready
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (dense.status, dense.job_id, dense.utterance_count) == (IndexStatus.READY, job.pk, 30_000)
    # and its pools are those built from indexes made first, in one piece, without a job
    repository = Repository.objects.get(name="subtitles")
    lexical_index_build(repository=repository)
    embeddings_build(repository=repository)
    reference = pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=1.0)
    )
    assert RetrievalIndex.objects.filter(kind=IndexKind.DENSE, status=IndexStatus.READY).exclude(job=job).count() == 1
    assert_pools_complete(n, reference)
