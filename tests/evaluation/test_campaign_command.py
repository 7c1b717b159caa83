"""The campaign command: create a campaign from names, run it here, read the report."""

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Campaign, RandomTrialResult
from evaluation.scoring.loading import scorer_cache_clear
from tests.evaluation.campaign_helpers import HUMAN_RATINGS as HUMAN
from tests.evaluation.campaign_helpers import build_repository, build_testset, rated_generation


@pytest.fixture
def named(db, scored_question):
    testset = build_testset(scored_question, questions=4)
    repository = build_repository()
    for name, plugin in (("shortest", "ShortestWinsPlugin"), ("longest", "LongestWinsPlugin")):
        call_command("register_system", name, "--kind", "plugin", "--plugin", f"tests.evaluation.plugins.{plugin}")
    keys = [f"q{question_id}" for question_id in testset.items.values_list("question_id", flat=True)]
    from evaluation.models import System

    generations = [
        rated_generation(System.objects.get(name=n), [HUMAN[n]] * len(keys), dataset=testset.dataset, keys=keys)
        for n in ("shortest", "longest")
    ]
    yield testset, repository, generations
    scorer_cache_clear()


def test_create_then_run_gives_a_report_with_chosen_and_random(named, capsys):
    testset, repository, generations = named
    # when a campaign is created from names and run here
    call_command(
        "campaign",
        "create",
        "cli",
        "--testset",
        testset.name,
        "--system",
        "shortest",
        "--system",
        "longest",
        *[f"--generation={g.pk}" for g in generations],
        "--repository",
        repository.name,
        "--random-trials",
        "3",
        "--resamples",
        "50",
    )
    call_command("campaign", "run", "cli", "--device", "cpu")
    # then every system ran every trial and the stored report ranks both systems
    campaign = Campaign.objects.get(name="cli")
    assert RandomTrialResult.objects.filter(campaign=campaign).count() == 2 * 3
    assert {row["system"] for row in campaign.report["leaderboard"]} == {"shortest", "longest"}
    assert "report ready at /campaigns/cli/" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--testset", "nope"], "no test set 'nope'"),
        (["--system", "ghost"], "no system"),
        (["--generation", "999999"], "no generation"),
        (["--repository", "nowhere"], "no repository 'nowhere'"),
    ],
)
def test_an_unknown_name_is_refused_and_nothing_is_created(named, options, message):
    with pytest.raises(CommandError, match=message):
        call_command("campaign", "create", "bad", *options)
    assert not Campaign.objects.filter(name="bad").exists()


@pytest.mark.parametrize("name", ["Bad", "two words"])
def test_a_campaign_name_must_be_a_slug(db, name):
    with pytest.raises(CommandError, match="campaign name .* must be a slug"):
        call_command("campaign", "create", name)
    assert not Campaign.objects.exists()


def test_systems_without_a_test_set_are_refused(named):
    with pytest.raises(CommandError, match="give the test set"):
        call_command("campaign", "create", "bad", "--system", "shortest")


def test_create_takes_the_test_set_as_release_too(named):
    testset, _, _ = named
    call_command("campaign", "create", "alias", "--release", testset.name, "--system", "shortest")
    campaign = Campaign.objects.get(name="alias")
    assert campaign.testset == testset and [s.name for s in campaign.systems.all()] == ["shortest"]


def test_running_an_unknown_campaign_says_so(db):
    with pytest.raises(CommandError, match="no campaign 'ghost'"):
        call_command("campaign", "run", "ghost")
