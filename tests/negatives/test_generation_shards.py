"""The negatives job in shards: in one process and on two real worker processes, the negatives
(texts, ranks, scores, provenance), the outcomes and the report are exactly those of a run in one
piece."""

from pathlib import Path

import pytest

from annotation.models import Candidate, CandidateSource, Dataset
from annotation.services.dialogue_import import dialogues_import
from core.models import JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_create, job_execute
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings
from negatives.models import QuestionGeneration
from negatives.services.generation import negatives_generate
from negatives.services.generation_shards import negatives_shard_size, negatives_shards_plan
from tests.security.workerkill.corpus import WORDS, sentences
from tests.tiny_models import TEXTS, build_tiny_mlm
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers

pytestmark = pytest.mark.slow

# The corpus model's best word scores lie between about 0 and 7: both outcomes (a negative, no word
# selected) occur.
THRESHOLD = 2.0


@pytest.fixture(scope="module")
def corpus_mlm_dir(tmp_path_factory) -> Path:
    """A tiny masked LM whose WordPiece vocabulary holds every word of the corpus as one piece: with the
    conftest's model most corpus words are several pieces, which the job does not replace, and whether
    any question got a negative then turned on the last digits of one CPU's arithmetic."""
    return build_tiny_mlm(tmp_path_factory.mktemp("corpus-mlm"), texts=TEXTS * 3 + [" ".join(WORDS)] * 3)


def two_datasets(folder: Path, n: int) -> None:
    """One dialogue file imported twice: datasets "reference" and "sharded" of ``n`` questions."""
    turns = sentences(4 * n, seed=12)
    dialogues = folder / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "sharded"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)


def negatives(dataset: str) -> list[tuple]:
    """Every generated candidate by its question's line (text, rank, score and provenance, exact),
    and every question's outcome."""
    candidates = Candidate.objects.filter(question__dataset__name=dataset, source=CandidateSource.MLM_NEGATIVE)
    outcomes = QuestionGeneration.objects.filter(question__dataset__name=dataset)
    return sorted(
        (line, *(repr(v) for v in rest))
        for line, *rest in candidates.values_list(
            "question__context__source_line", "text", "rank", "retrieval_score", "retriever_version", "provenance"
        )
    ) + sorted(
        outcomes.values_list(
            "question__context__source_line", "setup", "outcome", "words", "selected", "negatives_added"
        )
    )


def without_dataset(report: dict) -> dict:
    # the job's report adds the masked LM's guard, which the service in one piece does not measure
    return {key: value for key, value in report.items() if key not in ("dataset", "mlm_guard")}


def test_a_shard_holds_whole_batches():
    assert negatives_shard_size(batch_size=64, size=1000) == 1024
    assert negatives_shard_size(batch_size=4, size=7) == 8
    assert negatives_shard_size(batch_size=5, size=10) == 10


@pytest.mark.django_db
def test_the_plan_cuts_the_questions_into_blocks_of_consecutive_ids(tmp_path):
    # given 10 questions
    two_datasets(tmp_path, 10)
    dataset = Dataset.objects.get(name="sharded")
    # when they are planned in shards of 4
    plan = negatives_shards_plan(dataset=dataset, setup="s1", size=4)
    # then three shards cover every question once, in id order, with the job's setup
    ids = list(dataset.questions.filter(derived_from__isnull=True).order_by("id").values_list("id", flat=True))
    assert [(s.params["first_id"], s.params["last_id"], s.total) for s in plan] == [
        (ids[0], ids[3], 4),
        (ids[4], ids[7], 4),
        (ids[8], ids[9], 2),
    ]
    assert {s.params["setup"] for s in plan} == {"s1"}


@pytest.mark.django_db
def test_a_negatives_job_run_in_shards_here_gives_the_negatives_of_a_run_in_one_piece(
    tmp_path, corpus_mlm_dir, settings
):
    # given the same 30 questions twice, and negatives generated for the first in one piece, 4 per batch
    two_datasets(tmp_path, 30)
    reference = negatives_generate(
        dataset_name="reference",
        mlm_path=str(corpus_mlm_dir),
        settings=ManipulationSettings(threshold=THRESHOLD, per_question=2),
        batch_size=4,
    )
    # when the second's job runs in shards of 7 (rounded to 8) questions, eagerly here
    settings.WELLCHOSEN_JOB_SHARD_SIZE = 7
    params = GenerateNegativesParams(
        dataset="sharded", mlm=str(corpus_mlm_dir), threshold=THRESHOLD, per_question=2, batch_size=4, skip_guard=True
    )
    job = job_create(params=params, enqueue=False)
    job_execute(job_id=job.pk)
    # then it ran four shards, and every negative, outcome and count is the one-piece run's
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    shards = JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED)
    assert list(shards.order_by("number").values_list("total_count", flat=True)) == [8, 8, 8, 6]
    assert negatives("sharded") == negatives("reference")
    assert reference["generated"] and reference["no_word_selected"]
    assert reference["several_pieces_only"] == 0
    assert without_dataset(job.result) == without_dataset(reference)
    assert job.phases[-1]["name"] == "scoring and replacing words" and job.phases[-1]["done"] == 30


@pytest.mark.workers
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_negatives_job_and_give_the_negatives_of_one_worker(
    tmp_path, corpus_mlm_dir, data_dir, monkeypatch
):
    # given the same 400 questions twice, and negatives generated for the first in one piece, here
    n = 400
    two_datasets(tmp_path, n)
    reference = negatives_generate(
        dataset_name="reference",
        mlm_path=str(corpus_mlm_dir),
        settings=ManipulationSettings(threshold=THRESHOLD, per_question=2),
        batch_size=10,
    )
    # and two worker processes on one queue, which split negatives jobs into shards of 40 questions
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_JOB_SHARD_SIZE": "40"}
    ) as pair:
        # when the second dataset's job is sent to them
        params = GenerateNegativesParams(
            dataset="sharded",
            mlm=str(corpus_mlm_dir),
            threshold=THRESHOLD,
            per_question=2,
            batch_size=10,
            skip_guard=True,
        )
        job = job_create(params=params, enqueue=False)
        job = pair.run(job)
    # then the job succeeded, its 10 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=10)
    # and every negative and outcome is the one-process run's, and so is the report
    assert negatives("sharded") == negatives("reference")
    assert without_dataset(job.result) == without_dataset(reference)
    assert QuestionGeneration.objects.filter(question__dataset__name="sharded").count() == n
