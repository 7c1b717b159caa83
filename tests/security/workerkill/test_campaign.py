"""A campaign job killed mid RANDOM trials: its shards are taken over, and every system ends with
one result per trial, the results of a run never killed."""

import json

import pytest
from django.db.models import F

from core.models import Job, JobShard, JobShardStatus
from core.services.jobs import job_create
from evaluation.job_params import CampaignParams
from evaluation.models import RandomTrialResult
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaigns import campaign_random_run
from evaluation.services.systems import system_register
from tests.evaluation.campaign_helpers import build_repository, campaign_with
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over
from testsets.services.build import testset_build
from testsets.services.import_tsv import testset_import

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

QUESTIONS, TRIALS = 40, 30


@pytest.fixture
def systems(db, tiny_gpt2_dir):
    yield [
        system_register(name="gpt", kind="causal", checkpoint=str(tiny_gpt2_dir), max_candidate_tokens=32),
        system_register(name="shortest", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin"),
    ]
    scorer_cache_clear()


def rows(campaign) -> list[tuple]:
    return sorted(
        RandomTrialResult.objects.filter(campaign=campaign).values_list("system__name", "trial", "questions", "correct")
    )


def test_a_campaign_killed_mid_random_trials_resumes_and_scores_every_trial_once(
    cluster, systems, filter_rules, tmp_path
):
    # given a test set of 40 questions, a repository, a language model and a plugin, 30 trials
    # each, in shards of 10 trials (two blocks of 5 per call for the language model)
    texts = sentences(7 * QUESTIONS, seed=22)
    tsv, jsonl = tmp_path / "testset.tsv", tmp_path / "scores.jsonl"
    tsv.write_text("".join("\t".join(texts[7 * i : 7 * i + 7]) + "\n" for i in range(QUESTIONS)))
    jsonl.write_text((json.dumps([[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3) + "\n") * QUESTIONS)
    testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="killed")
    fields = {
        "systems": systems,
        "testset": testset_build(dataset_name="killed", name="r1"),
        "repository": build_repository(size=200),
        "random_trials": TRIALS,
        "seed": 4,
    }
    campaign = campaign_with("killed", **fields)
    cluster.env["WELLCHOSEN_TRIAL_SHARD_SIZE"] = "10"
    job = job_create(params=CampaignParams(campaign_id=campaign.pk, evaluate=False, device="cpu"), enqueue=False)
    at_kill = {}

    def mid_shard() -> bool:
        """A shard between two of its committed blocks (the language model's second shard, the
        job's first tenth being done): killed, it leaves part of its trials committed."""
        running = JobShard.objects.filter(job=job, status=JobShardStatus.RUNNING)
        return running.filter(done_count__gt=0, done_count__lt=F("total_count")).exists()

    def committed_blocks_kept() -> None:
        at_kill["rows"] = len(rows(campaign))
        at_kill["running"] = list(
            JobShard.objects.filter(job=job, status=JobShardStatus.RUNNING).values_list("number", flat=True)
        )
        assert at_kill["rows"] >= Job.objects.get(pk=job.pk).done_count > 0
        assert len(at_kill["running"]) == 1

    # when its worker is killed part-way through the trials and a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, kill_at=0.1, kill_when=mid_shard, after_kill=committed_blocks_kept)
    # then the campaign job succeeded once, its plan kept, the shard killed mid-way taken over
    assert_succeeded_once(job)
    shards = JobShard.objects.filter(job=job)
    assert shards.count() == 2 * TRIALS // 10
    assert set(shards.values_list("status", flat=True)) == {JobShardStatus.SUCCEEDED}
    assert set(shards.filter(number__in=at_kill["running"]).values_list("attempts", flat=True)) == {2}
    # and every system has one result per trial, the results of a run never killed
    killed = rows(campaign)
    assert len(killed) == len({(name, trial) for name, trial, *_ in killed}) == 2 * TRIALS
    never_killed = campaign_with("never-killed", **fields)
    campaign_random_run(campaign_id=never_killed.pk, device="cpu")
    assert killed == rows(never_killed)
    # (the trials the killed shard had committed count as skipped: its second attempt found them)
    random = job.result["random"]
    assert random["scored"] + random["skipped"] == 2 * TRIALS and 0 < random["skipped"] <= at_kill["rows"]
