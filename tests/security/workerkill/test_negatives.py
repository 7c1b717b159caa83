"""Generating negatives killed mid-run: the job resumes from its committed batches (its shard plan
kept) and ends with exactly the negatives of a run never killed."""

import pytest

from annotation.models import Candidate, CandidateSource
from annotation.services.dialogue_import import dialogues_import
from core.models import Job, JobShard, JobShardStatus
from core.services.jobs import job_create
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings
from negatives.models import QuestionGeneration
from negatives.services.generation import negatives_generate
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

EVERY_WORD = -1e9
BATCH = 32


def negatives(dataset: str) -> dict[int, list[tuple]]:
    rows = Candidate.objects.filter(question__dataset__name=dataset, source=CandidateSource.MLM_NEGATIVE).values_list(
        "question__context__source_line", "text_hash", "rank"
    )
    found: dict[int, list[tuple]] = {}
    for line, *candidate in rows:
        found.setdefault(line, []).append(tuple(candidate))
    return {line: sorted(candidates) for line, candidates in found.items()}


def test_negatives_killed_mid_dataset_resume_and_end_equal_to_a_run_never_killed(cluster, tiny_mlm_dir, tmp_path):
    # given 800 questions, generated 32 per committed batch in shards of 200 (rounded to 224) questions:
    # the job reports its progress at each batch, so the kill lands mid-shard; a worker that takes
    # the job over runs the shards' queued messages first, so the timeouts cover all the work left
    n = 800
    cluster.env["WELLCHOSEN_JOB_SHARD_SIZE"] = "200"
    turns = sentences(4 * n, seed=21)
    dialogues = tmp_path / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    reference = negatives_generate(
        dataset_name="reference",
        mlm_path=str(tiny_mlm_dir),
        settings=ManipulationSettings(threshold=EVERY_WORD, per_question=2),
        batch_size=BATCH,
    )
    job = job_create(
        params=GenerateNegativesParams(
            dataset="killed",
            mlm=str(tiny_mlm_dir),
            threshold=EVERY_WORD,
            per_question=2,
            batch_size=BATCH,
            skip_guard=True,
        ),
        enqueue=False,
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionGeneration.objects.filter(question__dataset__name="killed").count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0
        # a shard that succeeded before the kill keeps its report; the others skip what was committed
        finished = JobShard.objects.filter(job=job, status=JobShardStatus.SUCCEEDED)
        kept["in_finished_shards"] = sum(finished.values_list("total_count", flat=True))

    # when its worker is killed part-way and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    # then it succeeded once, its plan kept and every shard succeeded
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 4 and set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    assert job.result["skipped_finished"] == kept["done"] - kept["in_finished_shards"]
    assert job.result["questions"] == n
    # and its negatives are exactly those of a run never killed
    assert negatives("killed") == negatives("reference")
    generated = Candidate.objects.filter(question__dataset__name="killed", source=CandidateSource.MLM_NEGATIVE)
    assert generated.count() == reference["candidates_added"] > n
    assert QuestionGeneration.objects.filter(question__dataset__name="killed").count() == n
