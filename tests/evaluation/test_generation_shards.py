"""The generation job in shards: in one process and on two real worker processes, every response
(nucleus sampling included) is exactly that of a run in one piece."""

from pathlib import Path

import pytest

from annotation.services.dialogue_import import dialogues_import
from core.models import JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_execute
from evaluation.models import DecodingStrategy, EvaluationStatus, GeneratedResponse, Generation
from evaluation.selectors import generation_contexts
from evaluation.services.evaluation_shards import context_order, generation_shards_plan
from evaluation.services.generations import generation_run, generation_start, generation_summary
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers

pytestmark = pytest.mark.slow

DECODING = {"strategy": DecodingStrategy.NUCLEUS, "top_p": 0.9, "seed": 7, "max_new_tokens": 8}


def dataset(folder: Path, n: int) -> None:
    """A dataset "dialogues" of ``n`` questions (contexts of different lengths)."""
    turns = sentences(4 * n, seed=32)
    lines = [" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)]
    (folder / "dialogues.txt").write_text("".join(lines))
    dialogues_import(path=folder / "dialogues.txt", fmt="dailydialog", dataset_name="dialogues")


def responses(system_name: str) -> list[tuple]:
    """Every response by its context key: its question, context, reference, text and length."""
    return sorted(
        GeneratedResponse.objects.filter(generation__system__name=system_name).values_list(
            "context_key", "question_id", "context", "references", "text", "n_tokens"
        )
    )


def summary_without_system(generation: Generation) -> dict:
    return {key: value for key, value in generation_summary(generation=generation).items() if key != "system"}


def reference_run(batch_size: int) -> Generation:
    reference, _ = generation_start(
        system_name="reference",
        dataset_name="dialogues",
        enqueue=False,
        batch_size=batch_size,
        device="cpu",
        **DECODING,
    )
    generation_run(generation_id=reference.pk, batch_size=batch_size, device="cpu")
    return reference


@pytest.mark.django_db
def test_the_plan_cuts_the_contexts_into_blocks_in_answering_order(tmp_path, two_gpts):
    # given 10 questions whose contexts differ in length
    dataset(tmp_path, 10)
    generation, _ = generation_start(system_name="sharded", dataset_name="dialogues", enqueue=False)
    # when they are planned in shards of 4
    plan = generation_shards_plan(generation=generation, size=4)
    # then three shards list every question once, longest context first
    ordered = [c["id"] for c in sorted(generation_contexts(generation=generation, pending=False), key=context_order)]
    assert [s.params["question_ids"] for s in plan] == [ordered[0:4], ordered[4:8], ordered[8:10]]
    assert [s.total for s in plan] == [4, 4, 2] and ordered != sorted(ordered)


@pytest.mark.django_db
def test_a_generation_job_run_in_shards_here_gives_the_responses_of_a_run_in_one_piece(tmp_path, two_gpts, settings):
    # given 30 contexts answered in one piece (no job: no shards), nucleus sampling, 2 per batch
    dataset(tmp_path, 30)
    reference = reference_run(batch_size=2)
    # when the same model's job runs in shards of 7 (rounded to 8) contexts, eagerly here
    settings.WELLCHOSEN_EVALUATION_SHARD_SIZE = 7
    generation, job = generation_start(
        system_name="sharded", dataset_name="dialogues", enqueue=False, batch_size=2, device="cpu", **DECODING
    )
    job_execute(job_id=job.pk)
    # then it ran four shards, and every response and the summary are the one-piece run's
    job.refresh_from_db()
    generation.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    shards = JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED)
    assert list(shards.order_by("number").values_list("total_count", flat=True)) == [8, 8, 8, 6]
    assert generation.status == EvaluationStatus.SUCCEEDED
    assert responses("sharded") == responses("reference") and len(responses("sharded")) == 30
    assert summary_without_system(generation) == summary_without_system(reference)
    assert job.result["responses"] == 30
    assert job.phases[-1]["name"] == "generating responses" and job.phases[-1]["done"] == 30


@pytest.mark.workers
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_generation_job_and_give_the_responses_of_one_worker(
    tmp_path, two_gpts, data_dir, monkeypatch
):
    # given 80 contexts answered in one piece, in this process, 4 per batch
    n = 80
    dataset(tmp_path, n)
    reference_run(batch_size=4)
    # and two worker processes on one queue, which split generation jobs into shards of 8 contexts
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_EVALUATION_SHARD_SIZE": "8"}
    ) as pair:
        # when the same model's generation job is sent to them
        generation, job = generation_start(
            system_name="sharded", dataset_name="dialogues", enqueue=False, batch_size=4, device="cpu", **DECODING
        )
        job = pair.run(job)
    # then the job succeeded, its 10 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=10)
    # and every response is the one-process run's
    assert responses("sharded") == responses("reference") and len(responses("sharded")) == n
