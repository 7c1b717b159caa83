"""The campaign job end to end on the CPU: CHOSEN evaluations, RANDOM trials, the report; started from the admin."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from core.models import Job, JobShard, JobShardStatus, JobStatus
from core.services.jobs import job_execute
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign, Evaluation, EvaluationStatus, RandomTrialResult, System
from evaluation.report import CHOSEN, RANDOM, SPLIT_HALF
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaigns import campaign_start
from tests.evaluation.campaign_helpers import (
    HUMAN_RATINGS,
    build_repository,
    build_testset,
    campaign_with,
    rated_generation,
)
from tests.evaluation.plugins import LongestWinsPlugin
from tests.factories import UserFactory

TRIALS = 10
# human ratings per system (two annotators, one response per test-set question): a clear ranking


@pytest.fixture
def setup(db, scored_question, tiny_gpt2_dir):
    """A test set of 6 questions, a repository, and three local systems registered with the command."""
    LongestWinsPlugin.reset()
    testset = build_testset(scored_question, questions=6)
    repository = build_repository()
    call_command("register_system", "tiny", "--kind", "causal", "--checkpoint", str(tiny_gpt2_dir))
    for name, plugin in (("shortest", "ShortestWinsPlugin"), ("longest", "LongestWinsPlugin")):
        call_command("register_system", name, "--kind", "plugin", "--plugin", f"tests.evaluation.plugins.{plugin}")
    yield testset, repository
    scorer_cache_clear()
    LongestWinsPlugin.reset()


def rated_campaign(testset, repository, names, **fields) -> Campaign:
    """A campaign of the named systems, each with one rated response per test-set question."""
    keys = [f"q{question_id}" for question_id in testset.items.values_list("question_id", flat=True)]
    generations = [
        rated_generation(
            System.objects.get(name=name), [HUMAN_RATINGS[name]] * len(keys), dataset=testset.dataset, keys=keys
        )
        for name in names
    ]
    systems = System.objects.filter(name__in=names)
    return campaign_with(
        systems=systems, generations=generations, testset=testset, repository=repository, random_trials=TRIALS, **fields
    )


def run(campaign: Campaign) -> Job:
    job = campaign_start(campaign=campaign, enqueue=False, device="cpu")
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    campaign.refresh_from_db()
    return job


def test_campaign_job_evaluates_runs_random_trials_and_reports(setup):
    # given three local systems with human ratings, none evaluated yet
    campaign = rated_campaign(*setup, ["tiny", "shortest", "longest"], bootstrap_resamples=200)
    # when the campaign job runs
    job = run(campaign)
    # then every system was evaluated on the test set (CHOSEN) and scored on every RANDOM trial
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert set(Evaluation.objects.values_list("status", flat=True)) == {EvaluationStatus.SUCCEEDED}
    assert RandomTrialResult.objects.filter(campaign=campaign).count() == 3 * TRIALS
    # and the stored report has the leaderboard with CHOSEN accuracies and RANDOM distributions
    report = campaign.report
    assert campaign.report_at is not None and job.result["report_at"] == report["computed_at"]
    board = {row["system"]: row for row in report["leaderboard"]}
    assert [row["system"] for row in report["leaderboard"]] == ["tiny", "shortest", "longest"]
    for name, row in board.items():
        evaluation = Evaluation.objects.get(system__name=name)
        assert row["accuracy"] == evaluation.summary["accuracy"]
        assert [row["ci_low"], row["ci_high"]] == evaluation.summary["ci95"]
        assert row["human"] == pytest.approx(sum(HUMAN_RATINGS[name]) / 2)
        assert row["random"]["trials"] == TRIALS
        assert set(row["metrics"]) == {"BLEU-1", "BLEU-2", "METEOR", "ROUGE-L"}
    # the correlation table has every row, the box plot one point per trial, the breakdown the labels
    names = [row["name"] for row in report["table"]["rows"]]
    assert names == [CHOSEN, RANDOM, "BLEU-1", "BLEU-2", "METEOR", "ROUGE-L", SPLIT_HALF]
    assert len(report["random_correlations"]) == TRIALS
    assert report["box_plot_svg"].startswith("<svg")
    assert set(report["breakdown"]["per_label"]["off-topic"]) == {"tiny", "shortest", "longest"}
    assert set(report["breakdown"]["per_source"]) == {"dense", "lexical"}


def test_the_evaluations_of_a_campaign_run_in_shards_of_their_own_jobs(setup):
    # given a campaign of two systems, none evaluated yet
    campaign = rated_campaign(*setup, ["shortest", "longest"])
    # when the campaign job runs them inside it
    job = run(campaign)
    # then each evaluation's own job scored its test set in a shard, and the campaign showed it
    assert job.status == JobStatus.SUCCEEDED, job.error
    for evaluation in Evaluation.objects.select_related("job"):
        shards = JobShard.objects.filter(job=evaluation.job)
        assert list(shards.values_list("status", "total_count")) == [(JobShardStatus.SUCCEEDED, 6)]
        assert evaluation.job.status == JobStatus.SUCCEEDED and evaluation.summary["questions"] == 6
        assert f"job #{evaluation.job.pk}: scoring questions" in [phase["name"] for phase in job.phases]
    # and the campaign's own job ran its RANDOM trials in shards of its own, one per system
    own = JobShard.objects.filter(job=job).order_by("number")
    systems = dict(System.objects.values_list("pk", "name"))
    assert [(systems[s.params["system_id"]], s.status, s.total_count) for s in own] == [
        ("longest", JobShardStatus.SUCCEEDED, TRIALS),
        ("shortest", JobShardStatus.SUCCEEDED, TRIALS),
    ]


def test_the_evaluations_jobs_of_a_campaign_name_who_started_the_campaign(setup):
    # given a campaign that a researcher starts
    campaign = rated_campaign(*setup, ["shortest", "longest"])
    researcher = UserFactory(username="rosa", is_staff=True)
    job = campaign_start(campaign=campaign, enqueue=False, device="cpu", created_by=researcher)
    # when its job runs the evaluations inside it
    job_execute(job_id=job.pk)
    # then each evaluation's job names the researcher too, not the command line
    jobs = [evaluation.job for evaluation in Evaluation.objects.select_related("job__created_by")]
    assert len(jobs) == 2 and {j.created_by for j in jobs} == {researcher}


def test_a_second_run_reuses_evaluations_and_trials(setup):
    campaign = rated_campaign(*setup, ["shortest", "longest"])
    run(campaign)
    evaluations = list(Evaluation.objects.values_list("id", "finished_at"))
    LongestWinsPlugin.reset()
    # when the campaign runs again
    job = run(campaign)
    # then nothing was scored again; only the report was recomputed
    assert job.status == JobStatus.SUCCEEDED
    assert LongestWinsPlugin.scored == []
    assert list(Evaluation.objects.values_list("id", "finished_at")) == evaluations
    assert job.result["random"]["scored"] == 0


def test_two_systems_get_a_plus_or_minus_one_table_with_a_note(setup):
    # given a campaign of two local systems, rated by humans
    campaign = rated_campaign(*setup, ["tiny", "shortest"])
    job = run(campaign)
    assert job.status == JobStatus.SUCCEEDED, job.error
    report = campaign.report
    assert all(row["accuracy"] is not None and row["random"] for row in report["leaderboard"])
    # then the table and the box plot are there, each correlation +1 or -1, and a note says why
    chosen = next(row for row in report["table"]["rows"] if row["name"] == "CHOSEN accuracy")
    assert chosen["spearman"]["value"] in (None, pytest.approx(1), pytest.approx(-1))
    assert chosen["spearman"]["ci_low"] is None
    assert "<svg" in report["box_plot_svg"]
    assert any("2 systems with human scores" in note for note in report["notes"])


def test_one_job_at_a_time(setup):
    campaign = rated_campaign(*setup, ["shortest"])
    first = campaign_start(campaign=campaign, enqueue=False)
    assert campaign_start(campaign=campaign, enqueue=False) == first
    assert Job.objects.filter(kind=CampaignParams.kind).count() == 1


def test_researcher_runs_the_campaign_from_the_admin_and_reads_the_report(
    setup, admin_client, django_capture_on_commit_callbacks
):
    # given a campaign of the registered systems, with human ratings
    campaign = rated_campaign(*setup, ["tiny", "shortest", "longest"], bootstrap_resamples=100)
    # when the researcher runs it from the admin (Celery runs the job in-process in tests)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:evaluation_campaign_changelist"),
            {"action": "run_campaigns", "_selected_action": [campaign.pk]},
        )
    assert response.status_code == 302
    job = Job.objects.get(kind=CampaignParams.kind)
    assert job.status == JobStatus.SUCCEEDED, job.error
    # then the admin links to the report page, which shows the table and the box plot
    change = admin_client.get(reverse("admin:evaluation_campaign_change", args=[campaign.pk])).content.decode()
    url = reverse("campaign-report", args=[campaign.name])
    assert url in change
    page = admin_client.get(url).content.decode()
    assert "CHOSEN accuracy" in page and "RANDOM accuracy" in page and "Human (split-half)" in page
    assert '<div class="chart"><svg' in page
    assert "off-topic" in page
    # and the admin lists the RANDOM trial results and edits campaigns with their systems and generations
    trials = admin_client.get(reverse("admin:evaluation_randomtrialresult_changelist")).content.decode()
    assert f"{3 * TRIALS} random trial results" in trials
    assert 'id="id_systems"' in admin_client.get(reverse("admin:evaluation_campaign_add")).content.decode()
