"""The dense encoding of a repository in shards: blocks of consecutive utterance ids encoded by any
worker into their rows of one store, which ends byte for byte the store of a build in one piece,
searched alike (FAISS, and the Elasticsearch kNN index each shard loads its vectors into)."""

from pathlib import Path

import numpy as np
import pytest

from annotation.models import Repository, Utterance
from core.models import JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_create, job_execute
from retrieval.dense.backends import STORE_FOLDER
from retrieval.dense.encoder import get_encoder
from retrieval.job_params import BuildIndexesParams
from retrieval.models import IndexKind, IndexStatus, RetrievalIndex
from retrieval.selectors import dense_index_for
from retrieval.services.encoding_shards import encoding_chunking, encoding_shards_plan
from retrieval.services.indexing import embeddings_build
from retrieval.services.repository_import import repository_import
from tests.factories import RepositoryFactory, UtteranceFactory
from tests.retrieval.es_double import ElasticsearchDouble
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers

STORE_FILES = ("ids.npy", "vectors.bin", "meta.json")


@pytest.mark.parametrize(
    ("encoder_chunk", "size", "expected"),
    [(8192, 100_000, (106_496, 8192)), (25_000, 100_000, (100_000, 25_000)), (8192, 64, (64, 64)), (32, 70, (96, 32))],
)
def test_a_shard_holds_whole_chunks_of_the_encoder(encoder_chunk, size, expected):
    assert encoding_chunking(encoder_chunk=encoder_chunk, size=size) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(("n", "expected_counts"), [(0, []), (3, [3]), (8, [4, 4]), (9, [4, 4, 1])])
def test_the_plan_cuts_the_repositorys_utterances_into_blocks_at_their_rows(n, expected_counts):
    # given a repository of n utterances whose ids interleave with another repository's
    ours, theirs = RepositoryFactory(name="ours"), RepositoryFactory(name="theirs")
    ids = []
    for _ in range(n):
        ids.append(UtteranceFactory(repository=ours).pk)
        UtteranceFactory(repository=theirs)
    UtteranceFactory(repository=ours)  # imported after the snapshot
    index = RetrievalIndex.objects.create(
        repository=ours,
        kind=IndexKind.DENSE,
        version=1,
        name="ours-v1",
        content_version=1,
        params={"top_utterance_id": ids[-1] if ids else 0, "count": n},
    )
    # when it is planned in blocks of 4
    plan = encoding_shards_plan(index=index, size=4, chunk=2)
    # then each shard holds the next 4 of its ids, up to the snapshot, at their rows of the store
    blocks = [ids[start : start + 4] for start in range(0, n, 4)]
    assert [s.total for s in plan] == [len(b) for b in blocks] == expected_counts
    assert [s.params for s in plan] == [
        {"index": index.pk, "first_id": b[0], "last_id": b[-1], "offset": 4 * k, "count": len(b), "chunk": 2}
        for k, b in enumerate(blocks)
    ]


def import_repository(folder: Path, n: int) -> Repository:
    path = folder / "repository.txt"
    path.write_text("\n".join(sentences(n, seed=10)) + "\n")
    repository_import(path=path, name="subtitles")
    return Repository.objects.get(name="subtitles")


def encoded_in_shards(repository: Repository) -> RetrievalIndex:
    """The repository's dense index built by a build_indexes job, every shard run here (eager)."""
    job = job_create(params=BuildIndexesParams(repository=repository.name, kinds=["dense"]), enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    return RetrievalIndex.objects.get(job=job, kind=IndexKind.DENSE)


def encoded_in_one_piece(repository: Repository, monkeypatch, *, chunk: int) -> RetrievalIndex:
    """The one-piece build (indexing.embeddings_build), encoding ``chunk`` texts at a time."""
    monkeypatch.setattr(get_encoder(), "chunk", chunk)
    return embeddings_build(repository=Repository.objects.get(pk=repository.pk))


def assert_same_store_and_answers(sharded: RetrievalIndex, whole: RetrievalIndex, queries: list[str]) -> None:
    for name in STORE_FILES:
        assert (Path(sharded.name) / STORE_FOLDER / name).read_bytes() == (
            Path(whole.name) / STORE_FOLDER / name
        ).read_bytes(), name
    vectors = get_encoder().encode(queries)
    scores, ids = dense_index_for(sharded).search(vectors, k=10)
    whole_scores, whole_ids = dense_index_for(whole).search(vectors, k=10)
    assert (ids >= 0).all()
    assert np.array_equal(ids, whole_ids) and np.array_equal(scores, whole_scores)


def assert_shards_cover_the_repository(job_id: int, repository: Repository, *, size: int) -> None:
    """The shards are consecutive blocks of ``size`` utterances (the last one shorter), each at its rows."""
    ids = list(Utterance.objects.filter(repository=repository).order_by("id").values_list("id", flat=True))
    blocks = [ids[start : start + size] for start in range(0, len(ids), size)]
    planned = [s.params for s in JobShard.objects.filter(job_id=job_id).order_by("number")]
    assert [(p["first_id"], p["last_id"], p["offset"], p["count"], p["chunk"]) for p in planned] == [
        (block[0], block[-1], n * size, len(block), size) for n, block in enumerate(blocks)
    ]


@pytest.mark.slow
@pytest.mark.django_db
def test_an_encoding_in_shards_writes_the_store_of_a_build_in_one_piece(tmp_path, settings, monkeypatch):
    # given a repository of 300 utterances (the packaged MiniLM encodes them)
    repository = import_repository(tmp_path, 300)
    # when its dense index is built by a job in shards of 64 utterances
    settings.WELLCHOSEN_ENCODING_SHARD_SIZE = 64
    sharded = encoded_in_shards(repository)
    # then five shards encoded consecutive blocks, and the version records the encoder they used
    assert JobShard.objects.filter(job=sharded.job, status=JobShardStatus.SUCCEEDED).count() == 5
    assert_shards_cover_the_repository(sharded.job_id, repository, size=64)
    assert sharded.status == IndexStatus.READY and sharded.utterance_count == 300
    assert sharded.params["faiss_tier"] == "exact" and sharded.params["encoder_backend"] == "onnx-int8"
    # and its store is byte for byte that of a build in one piece (in chunks of 64), searched alike
    whole = encoded_in_one_piece(repository, monkeypatch, chunk=64)
    assert whole.version == sharded.version + 1
    assert_same_store_and_answers(sharded, whole, sentences(5, seed=3) + sentences(300, seed=10)[:3])


@pytest.mark.slow
@pytest.mark.django_db
def test_with_elasticsearch_knn_each_shard_loads_its_vectors_into_the_cluster_index(tmp_path, settings, monkeypatch):
    # given dense search on the cluster and a repository of 200 utterances
    with ElasticsearchDouble() as es:
        settings.ELASTICSEARCH_URL, settings.WELLCHOSEN_DENSE_SEARCH = es.url, "elasticsearch"
        repository = import_repository(tmp_path, 200)
        # when its dense index is built in shards of 64
        settings.WELLCHOSEN_ENCODING_SHARD_SIZE = 64
        sharded = encoded_in_shards(repository)
        # then the four shards loaded every utterance into the version's one cluster index, once
        assert JobShard.objects.filter(job=sharded.job).count() == 4
        name = sharded.params["es_index"]
        ids = Utterance.objects.filter(repository=repository).values_list("id", flat=True)
        assert sorted(es.indices[name].visible) == sorted(str(i) for i in ids)
        assert len(es.sent("PUT", f"/{name}")) == 1  # created once, by the job's worker
        # and the store and the kNN answers are those of a build in one piece
        whole = encoded_in_one_piece(repository, monkeypatch, chunk=64)
        assert_same_store_and_answers(sharded, whole, sentences(5, seed=3))
        assert not es.errors, es.errors


@pytest.mark.workers
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_an_encoding_and_write_the_store_of_one_piece(tmp_path, data_dir, monkeypatch):
    # given a repository of 2,560 utterances, and two worker processes that encode in shards of 256
    # (seconds of work: the second worker takes its first shard message before the first is done)
    repository = import_repository(tmp_path, 2560)
    get_encoder()  # the MiniLM export is made here, once, before the workers need it
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_ENCODING_SHARD_SIZE": "256"}
    ) as pair:
        # when its dense index job is sent to them
        job = job_create(params=BuildIndexesParams(repository="subtitles", kinds=["dense"]), enqueue=False)
        job = pair.run(job)
    # then its 10 shards ran once each, some on each worker
    assert_shards_once_on_every_worker(job, pair.workers, count=10)
    assert_shards_cover_the_repository(job.pk, repository, size=256)
    # and the store is byte for byte that of a build in one piece, here, searched alike
    sharded = RetrievalIndex.objects.get(job=job, kind=IndexKind.DENSE)
    whole = encoded_in_one_piece(repository, monkeypatch, chunk=256)
    assert_same_store_and_answers(sharded, whole, sentences(5, seed=3))
