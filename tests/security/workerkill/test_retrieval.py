"""Retrieval jobs killed mid-run: candidate pools resume from their committed batches and end equal
to a run that was never killed; an encoding is rebuilt whole and its store holds every utterance once."""

from pathlib import Path

import faiss
import numpy as np
import pytest

from annotation.models import Candidate, Utterance
from annotation.services.dialogue_import import dialogues_import
from core.models import Job
from core.services.jobs import job_create
from retrieval.dense.store import EmbeddingStore
from retrieval.job_params import BuildIndexesParams, BuildPoolsParams
from retrieval.models import IndexKind, IndexStatus, PoolStatus, QuestionRetrieval, RetrievalIndex
from retrieval.services.pools import PoolSettings, pools_build
from retrieval.services.repository_import import repository_import
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


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


def test_pools_killed_mid_dataset_resume_and_end_equal_to_a_run_never_killed(cluster, tiny_encoder, tmp_path):
    # given a repository with its indexes, and one dialogue file imported twice: a reference dataset
    # whose pools are built here without interruption, and the dataset of the job
    n = 1_200
    import_repository(tmp_path, 3_000)
    turns = sentences(4 * n, seed=11)
    dialogues = tmp_path / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    # (the tiny encoder's random weights make most texts look alike: no paraphrase filter)
    reference = pools_build(
        dataset_name="reference", repository_name="subtitles", settings=PoolSettings(paraphrase_threshold=1.0)
    )
    indexes = RetrievalIndex.objects.count()
    job = job_create(
        params=BuildPoolsParams(dataset="killed", repository="subtitles", paraphrase_threshold=1.0), enqueue=False
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionRetrieval.objects.filter(
            question__dataset__name="killed", status=PoolStatus.DONE
        ).count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    # when its worker is killed part-way through the questions and a second worker takes it over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then the second attempt built only the questions the first had not committed
    assert_succeeded_once(job)
    assert job.result["skipped_finished"] == kept["done"]
    assert job.result["built"] + kept["done"] == n
    # and every pool is the one a run never killed built: no candidate lost, none twice
    assert pools("killed") == pools("reference")
    candidates = Candidate.objects.filter(question__dataset__name="killed", is_ground_truth=False)
    assert candidates.count() == reference["candidates_added"] == 10 * n
    assert candidates.values("question", "text_hash").distinct().count() == 10 * n
    retrievals = QuestionRetrieval.objects.filter(question__dataset__name="killed")
    assert (retrievals.count(), retrievals.filter(status=PoolStatus.DONE).count()) == (n, n)
    assert RetrievalIndex.objects.count() == indexes  # the indexes were used, not rebuilt


def test_an_encoding_killed_mid_repository_is_rebuilt_whole_with_every_utterance_once(cluster, tiny_encoder, tmp_path):
    # given a repository of 30,000 utterances, encoded 8,192 at a time
    n = 30_000
    import_repository(tmp_path, n)
    job = job_create(params=BuildIndexesParams(repository="subtitles", kinds=["dense"]), enqueue=False)
    # when its worker is killed after the first chunks and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster)
    # then the job succeeded once and one embedding index is ready, of every utterance once
    assert_succeeded_once(job)
    ready = RetrievalIndex.objects.get(kind=IndexKind.DENSE, status=IndexStatus.READY)
    assert job.result["dense"]["name"] == ready.name and ready.utterance_count == n
    store = EmbeddingStore(Path(ready.name) / "store")
    ids = list(Utterance.objects.filter(repository__name="subtitles").order_by("id").values_list("id", flat=True))
    assert store.meta.count == n and np.asarray(store.ids).tolist() == ids
    assert faiss.read_index(str(Path(ready.name) / "faiss.index")).ntotal == n
    # and its vectors are the encoder's, as in a run never killed
    sample = ids[:: n // 500]
    texts = dict(Utterance.objects.filter(id__in=sample).values_list("id", "text"))
    expected = tiny_encoder.encode([texts[i] for i in sample])
    assert np.allclose(store.vectors_for(sample), expected, atol=2e-3)
    # and the version the killed attempt was building says it failed, its files gone
    killed = RetrievalIndex.objects.get(kind=IndexKind.DENSE, version=ready.version - 1)
    assert killed.status == IndexStatus.FAILED and "interrupted" in killed.error
    assert not Path(killed.name).exists()
    assert RetrievalIndex.objects.count() == 2
