"""A campaign job's RANDOM trials in shards: in one process and on two real worker processes, the
RandomTrialResult rows and the report are exactly those of a run in one piece."""

import json

import pytest

from annotation.models import FilterRules
from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_create, job_execute
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign, RandomTrialResult, System
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaign_report import campaign_report_refresh
from evaluation.services.campaign_shards import trial_shard_size, trial_shards_plan
from evaluation.services.campaigns import campaign_random_run, campaign_run, campaign_trials_shard_score
from evaluation.services.systems import system_register
from tests.evaluation.campaign_helpers import build_repository, build_testset, campaign_with
from tests.evaluation.plugins import LongestWinsPlugin
from tests.security.workerkill.corpus import sentences
from tests.worker_helpers import assert_shards_once_on_every_worker, two_workers
from testsets.services.build import testset_build
from testsets.services.import_tsv import testset_import

TRIALS = 12


@pytest.fixture
def systems(db, tiny_gpt2_dir):
    """A language model (blocks of 5 trials per call) and two plugins (a trial per call)."""
    LongestWinsPlugin.reset()
    yield [
        system_register(name="tiny", kind="causal", checkpoint=str(tiny_gpt2_dir), max_candidate_tokens=32),
        system_register(name="longest", kind="plugin", plugin="tests.evaluation.plugins.LongestWinsPlugin"),
        system_register(name="shortest", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin"),
    ]
    LongestWinsPlugin.reset()
    scorer_cache_clear()


@pytest.fixture
def campaign(db, scored_question, systems) -> Campaign:
    testset = build_testset(scored_question, questions=6)
    return campaign_with(systems=systems, testset=testset, repository=build_repository(), random_trials=TRIALS)


def rows(campaign: Campaign) -> list[tuple]:
    """Every RANDOM result of the campaign: system, trial, questions asked, right answers."""
    return sorted(
        RandomTrialResult.objects.filter(campaign=campaign).values_list("system__name", "trial", "questions", "correct")
    )


def report_without_time(campaign: Campaign) -> dict:
    campaign.refresh_from_db()
    return {key: value for key, value in campaign.report.items() if key != "computed_at"}


def campaign_job(campaign: Campaign) -> Job:
    """The campaign's job, RANDOM trials only (its evaluations are not what is compared here)."""
    return job_create(params=CampaignParams(campaign_id=campaign.pk, evaluate=False, device="cpu"), enqueue=False)


def test_a_shard_holds_whole_blocks_of_trials():
    # when shards of 7 trials are asked for blocks of 5 trials per call (and of 20 for blocks of 1)
    # then they are rounded up to whole blocks
    assert trial_shard_size(per_call=5, size=7) == 10
    assert trial_shard_size(per_call=5, size=20) == 20
    assert trial_shard_size(per_call=1, size=20) == 20


def test_the_plan_cuts_each_systems_trials_into_blocks_of_consecutive_trials(campaign, systems):
    # when 12 trials of three systems are planned in shards of 5
    plan = trial_shards_plan(systems=systems, trials=TRIALS, size=5)
    # then each system has three shards covering its trials once, in order
    expected = [(s.pk, first, last, last - first + 1) for s in systems for first, last in ((0, 4), (5, 9), (10, 11))]
    assert [(p.params["system_id"], p.params["first_trial"], p.params["last_trial"], p.total) for p in plan] == expected


def test_a_shard_run_again_skips_its_trials_with_a_result(campaign, systems):
    # given a shard of the plugin's trials 5 to 9, scored once
    block = {"campaign_id": campaign.pk, "system_id": systems[1].pk, "first_trial": 5, "last_trial": 9}
    first = campaign_trials_shard_score(**block)
    LongestWinsPlugin.reset()
    # when it runs again (a takeover of a shard whose worker died after its last block)
    again = campaign_trials_shard_score(**block)
    # then it scored nothing twice, and nothing outside its block
    assert (first, again) == ({"scored": 5, "skipped": 0}, {"scored": 0, "skipped": 5})
    assert LongestWinsPlugin.scored == []
    assert [(name, trial) for name, trial, *_ in rows(campaign)] == [("longest", t) for t in range(5, 10)]


def test_a_campaign_job_in_shards_gives_the_rows_and_report_of_a_run_in_one_piece(campaign, settings):
    # given the campaign's RANDOM trials run in one piece (no job: no shards) and its report
    one_piece = campaign_random_run(campaign_id=campaign.pk, device="cpu")
    campaign_report_refresh(campaign=campaign)
    expected_rows, expected_report = rows(campaign), report_without_time(campaign)
    RandomTrialResult.objects.filter(campaign=campaign).delete()
    # when its job runs them again in shards of 3 trials (rounded to a block of 5), eagerly here
    settings.WELLCHOSEN_TRIAL_SHARD_SIZE = 3
    job = campaign_job(campaign)
    job_execute(job_id=job.pk)
    # then it ran three shards per system, its own (not an evaluation job's)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    shards = JobShard.objects.filter(job=job).order_by("number")
    assert [(s.status, s.total_count) for s in shards] == [(JobShardStatus.SUCCEEDED, n) for n in (5, 5, 2)] * 3
    # and the rows, the RANDOM counts and the report are the one-piece run's
    assert rows(campaign) == expected_rows and len(expected_rows) == 3 * TRIALS
    assert job.result["random"] == one_piece == {"trials": TRIALS, "systems": 3, "scored": 3 * TRIALS, "skipped": 0}
    assert report_without_time(campaign) == expected_report
    assert job.phases[-1]["name"] == "RANDOM trials" and job.phases[-1]["done"] == 3 * TRIALS


def test_a_sharded_campaign_job_skips_the_trials_already_done(campaign, settings):
    # given trials 0 to 6 of every system done, in shards of 5
    settings.WELLCHOSEN_TRIAL_SHARD_SIZE = 5
    RandomTrialResult.objects.bulk_create(
        RandomTrialResult(campaign=campaign, system=system, trial=t, questions=6, correct=6)
        for system in campaign.systems.all()
        for t in range(7)
    )
    LongestWinsPlugin.reset()
    # when the job runs
    job = campaign_job(campaign)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    # then it scored the 5 trials left per system, and kept the rows done
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["random"] == {"trials": TRIALS, "systems": 3, "scored": 3 * 5, "skipped": 3 * 7}
    assert len(rows(campaign)) == 3 * TRIALS
    assert RandomTrialResult.objects.filter(trial__lt=7, correct=6).count() == 3 * 7
    # the plugin scored its ground truths in the two shards with work left, and its 5 trials
    assert LongestWinsPlugin.scored == [6, 18, 18, 18, 6, 18, 18]


def test_a_cancel_stops_the_shards_and_a_new_job_finishes_the_trials(campaign, settings):
    # given the campaign's job cancelled by the plugin's 4th call (its ground truths, then trials 0 to 2)
    settings.WELLCHOSEN_TRIAL_SHARD_SIZE = 5
    LongestWinsPlugin.cancel_on_call = 4
    job = campaign_job(campaign)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    # then the job is cancelled, its running shard stopped, and the trials committed before are kept
    assert job.status == JobStatus.CANCELLED
    assert JobShard.objects.filter(job=job, status=JobShardStatus.FAILED).count() == 1
    assert [t for name, t, *_ in rows(campaign) if name == "longest"] == [0, 1, 2]
    # and a new job finishes the rest
    LongestWinsPlugin.reset()
    job = campaign_job(campaign)
    job_execute(job_id=job.pk)
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    assert len(rows(campaign)) == 3 * TRIALS


def test_a_campaign_run_directly_scores_its_trials_in_one_piece(campaign):
    # when the campaign runs without a job (a command, a script)
    campaign_run(campaign_id=campaign.pk, evaluate=False, device="cpu")
    # then every trial is scored and no shard was planned
    assert len(rows(campaign)) == 3 * TRIALS
    assert not JobShard.objects.exists()


@pytest.fixture
def large_campaign(db, tmp_path, systems):
    """A test set of 40 questions (ground truth + 3 false candidates) and a repository of 200 texts."""
    n = 40
    FilterRules.objects.get_or_create(version=1, defaults={"note": "Sato et al. (ACL 2020) §3.1 defaults"})
    texts = sentences(7 * n, seed=31)
    tsv, jsonl = tmp_path / "testset.tsv", tmp_path / "scores.jsonl"
    tsv.write_text("".join("\t".join(texts[7 * i : 7 * i + 7]) + "\n" for i in range(n)))
    jsonl.write_text((json.dumps([[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3) + "\n") * n)
    testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="sharded")
    testset = testset_build(dataset_name="sharded", name="r1")
    repository = build_repository(size=200)

    def make(name: str) -> Campaign:
        chosen = System.objects.filter(name__in=["tiny", "shortest"])
        return campaign_with(name, systems=chosen, testset=testset, repository=repository, random_trials=40, seed=3)

    return make


@pytest.mark.workers
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_campaigns_trials_and_give_the_rows_of_one_worker(
    large_campaign, tmp_path, data_dir, monkeypatch
):
    # given a campaign of a language model and a plugin, 40 trials each, run in one piece here
    reference = large_campaign("reference")
    campaign_random_run(campaign_id=reference.pk, device="cpu")
    # and two worker processes on one queue, which split the trials into shards of 5
    with two_workers(
        tmp_path=tmp_path, data_dir=data_dir, monkeypatch=monkeypatch, env={"WELLCHOSEN_TRIAL_SHARD_SIZE": "5"}
    ) as pair:
        # when an identical campaign's job is sent to them
        sharded = large_campaign("sharded")
        job = campaign_job(sharded)
        job = pair.run(job)
    # then the job succeeded, its 16 shards each once, and both workers ran some of them
    assert_shards_once_on_every_worker(job, pair.workers, count=2 * 8)
    # and every trial's result is the one-process run's
    assert rows(sharded) == rows(reference) and len(rows(sharded)) == 2 * 40
    assert job.result["random"] == {"trials": 40, "systems": 2, "scored": 80, "skipped": 0}
