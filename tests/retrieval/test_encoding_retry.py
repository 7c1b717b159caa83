"""An index job whose encoding failed mid-way, retried (core.services.job_retries): it goes on with the
same dense version, encodes only the shards that had not succeeded, and its store is byte for byte
that of a build in one piece; its lexical version is kept. A retry that finds its version given up
encodes anew, under a new version."""

from pathlib import Path

import pytest

from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.job_retries import job_retry
from core.services.jobs import job_create, job_execute
from retrieval.dense.backends import STORE_FOLDER
from retrieval.dense.encoder import get_encoder
from retrieval.job_params import BuildIndexesParams
from retrieval.models import IndexKind, IndexStatus, RetrievalIndex
from retrieval.services.indexing import embeddings_build
from tests.factories import staff_with
from tests.security.workerkill.corpus import sentences

from .test_encoding_shards import assert_same_store_and_answers, encoded_in_one_piece, import_repository

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


class FlakyEncoder:
    """The encoder's ``encode``, recording the texts of each call; the call numbered ``fail_on``
    (from 1) raises as a GPU out of memory would, while ``outage`` holds."""

    def __init__(self, monkeypatch, *, fail_on: int) -> None:
        self.encoder = get_encoder()
        self.encode = self.encoder.encode
        self.calls: list[list[str]] = []
        self.fail_on, self.outage = fail_on, True
        monkeypatch.setattr(self.encoder, "encode", self)

    def __call__(self, texts):
        self.calls.append(list(texts))
        if self.outage and len(self.calls) == self.fail_on:
            raise RuntimeError("CUDA error: out of memory")
        return self.encode(texts)


def failed_index_job(tmp_path, settings, monkeypatch) -> tuple[Job, FlakyEncoder]:
    """An index job (lexical and dense) on a repository of 300 utterances, encoded in 5 shards of 64,
    that failed in its third shard."""
    import_repository(tmp_path, 300)
    settings.WELLCHOSEN_ENCODING_SHARD_SIZE = 64
    flaky = FlakyEncoder(monkeypatch, fail_on=3)  # one call of 64 texts per shard
    job = job_create(params=BuildIndexesParams(repository="subtitles"), enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("encoding shard 3 of 5 failed: RuntimeError: CUDA error: out of memory")
    return job, flaky


def retried(job: Job) -> Job:
    job_retry(job_id=job.pk, user=staff_with("core.change_job", "annotation.change_repository"))
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    return job


def test_a_failed_encoding_keeps_its_version_building_with_its_finished_blocks(
    tiny_encoder, tmp_path, settings, monkeypatch
):
    job, _ = failed_index_job(tmp_path, settings, monkeypatch)
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (dense.status, dense.job_id) == (IndexStatus.BUILDING, job.pk)
    assert (Path(dense.name) / STORE_FOLDER / "vectors.bin").exists()
    shards = JobShard.objects.filter(job=job, stage="encoding").order_by("number")
    assert [s.status for s in shards] == [JobShardStatus.SUCCEEDED] * 2 + [JobShardStatus.FAILED] + [
        JobShardStatus.PENDING
    ] * 2


def test_a_retried_encoding_goes_on_with_its_version_and_encodes_only_what_was_left(
    tiny_encoder, tmp_path, settings, monkeypatch
):
    # given an index job whose encoding failed in its third of five shards
    job, flaky = failed_index_job(tmp_path, settings, monkeypatch)
    first_run = list(flaky.calls)
    # when the outage is over and the job is retried
    flaky.outage = False
    retried(job)
    # then the failed shard and the two never run were encoded, and the two finished ones not again
    again = flaky.calls[len(first_run) :]
    assert again[0] == first_run[2] and [len(texts) for texts in again] == [64, 64, 44]
    assert not {text for texts in first_run[:2] for text in texts} & {text for texts in again for text in texts}
    # under the same dense version, now ready; the lexical version built before the failure is kept
    dense = RetrievalIndex.objects.get(kind=IndexKind.DENSE)
    assert (dense.version, dense.status, dense.job_id, dense.utterance_count) == (1, IndexStatus.READY, job.pk, 300)
    assert RetrievalIndex.objects.filter(kind=IndexKind.LEXICAL).count() == 1
    assert job.result["dense"]["name"] == dense.name
    # and its store is byte for byte that of a build in one piece, searched alike
    whole = encoded_in_one_piece(dense.repository, monkeypatch, chunk=64)
    assert_same_store_and_answers(dense, whole, sentences(5, seed=3))


def test_a_retry_that_finds_its_version_given_up_encodes_anew_under_a_new_version(
    tiny_encoder, tmp_path, settings, monkeypatch
):
    # given an index job whose encoding failed, and a dense build of the repository since, which gave its version up
    job, flaky = failed_index_job(tmp_path, settings, monkeypatch)
    flaky.outage = False
    given_up = RetrievalIndex.objects.get(kind=IndexKind.DENSE, job=job)
    embeddings_build(repository=given_up.repository)
    given_up.refresh_from_db()
    assert given_up.status == IndexStatus.FAILED and not Path(given_up.name).exists()
    # when the job is retried
    calls_before = len(flaky.calls)
    retried(job)
    # then it planned and encoded every shard again, into a new version that is ready
    dense = RetrievalIndex.objects.filter(kind=IndexKind.DENSE, job=job).exclude(pk=given_up.pk).get()
    assert (dense.version, dense.status, dense.utterance_count) == (3, IndexStatus.READY, 300)
    encoding = JobShard.objects.filter(job=job, stage="encoding")
    assert {s.params["index"] for s in encoding} == {dense.pk} and encoding.count() == 5
    assert sum(len(texts) for texts in flaky.calls[calls_before:]) == 300
