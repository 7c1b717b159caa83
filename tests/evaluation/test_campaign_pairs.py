"""Contrastive pairs in a campaign: the campaign job evaluates each local system on its pair set, and
the report ranks the systems by pair correctness (Table 3) and breaks it down by pair type."""

import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.models import Job, JobStatus
from core.services.jobs import job_execute
from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK
from evaluation.models import Campaign, EvaluationStatus, PairEvaluation, System, SystemKind
from evaluation.report import CHOSEN, PAIRS
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaigns import campaign_start
from tests.evaluation.campaign_helpers import build_testset, campaign_with, rated_generation
from tests.evaluation.plugins import ScriptedPlugin
from tests.factories import PairFactory, PairSetFactory

# "ranked" gives the correct responses (they start with "Sure", ScriptedPlugin's ground truths) the
# lower loss; "shortest" prefers the shorter response, "longest" the longer one.
PLUGINS = {"ranked": "ScriptedPlugin", "shortest": "ShortestWinsPlugin", "longest": "LongestWinsPlugin"}
HUMAN = {"ranked": (4, 5), "shortest": (2, 3), "longest": (1, 1)}
# (type, subtype, criterion, the correct response is the shorter one)
PAIRS_BUILT = [
    ("content", "noun", "el", True),
    ("content", "noun", "el", True),
    ("content", "noun", "ml", False),
    ("sentence", "negation", "", True),
    ("sentence", "negation", "", True),
    ("function", "", "", False),
]
# By hand from PAIRS_BUILT: (pairs, right) per system and column of the per-type table.
EXPECTED = {
    "ranked": {"all pairs": (6, 6), "content": (3, 3), "content/noun": (3, 3), "sentence": (2, 2), "function": (1, 1)},
    "shortest": {
        "all pairs": (6, 4),
        "content": (3, 2),
        "content/noun": (3, 2),
        "sentence": (2, 2),
        "function": (1, 0),
    },
    "longest": {"all pairs": (6, 2), "content": (3, 1), "content/noun": (3, 1), "sentence": (2, 0), "function": (1, 1)},
}


def build_pairs(pair_set) -> None:
    for n, (type_, subtype, criterion, shorter) in enumerate(PAIRS_BUILT):
        short, long = f"Sure, at six {n}.", f"Sure, I will bring the red umbrella {n}."
        correct, incorrect = (short, f"Maybe later at six or seven {n}.") if shorter else (long, f"No, at six {n}.")
        PairFactory(
            pair_set=pair_set, type=type_, subtype=subtype, criterion=criterion, correct=correct, incorrect=incorrect
        )


@pytest.fixture
def campaign(db, scored_question):
    """Three rated plugin systems, a test set, and a pair set of six accepted pairs and one pending."""
    ScriptedPlugin.reset()
    testset = build_testset(scored_question, questions=4)
    keys = [f"q{question_id}" for question_id in testset.items.values_list("question_id", flat=True)]
    pair_set = PairSetFactory(name="okano")
    build_pairs(pair_set)
    PairFactory(pair_set=pair_set, review="pending")
    systems, generations = [], []
    for name, plugin in PLUGINS.items():
        system = System.objects.create(name=name, kind=SystemKind.PLUGIN, plugin=f"tests.evaluation.plugins.{plugin}")
        systems.append(system)
        generations.append(rated_generation(system, [HUMAN[name]] * len(keys), dataset=testset.dataset, keys=keys))
    yield campaign_with(
        systems=systems, generations=generations, testset=testset, pair_set=pair_set, bootstrap_resamples=50
    )
    ScriptedPlugin.reset()
    scorer_cache_clear()


def run(campaign: Campaign) -> Job:
    job = campaign_start(campaign=campaign, enqueue=False, device="cpu")
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    campaign.refresh_from_db()
    return job


def test_the_campaign_job_evaluates_every_local_system_on_the_pair_set(campaign):
    # when the campaign runs
    job = run(campaign)
    # then each system has a succeeded pair evaluation of the six accepted pairs, right as counted by hand
    assert job.status == JobStatus.SUCCEEDED, job.error
    evaluations = {e.system.name: e for e in PairEvaluation.objects.select_related("system")}
    assert set(evaluations) == set(PLUGINS)
    for name, evaluation in evaluations.items():
        assert evaluation.status == EvaluationStatus.SUCCEEDED
        assert (evaluation.summary["n"], evaluation.summary["correct"]) == EXPECTED[name]["all pairs"]
    # and the leaderboard shows each system's pair correctness with its interval
    board = {row["system"]: row for row in campaign.report["leaderboard"]}
    assert board["shortest"]["pairs"]["accuracy"] == 4 / 6
    assert board["shortest"]["pairs"]["ci_low"] <= 4 / 6 <= board["shortest"]["pairs"]["ci_high"]
    assert any("1 pairs of set okano are pending review" in note for note in campaign.report["notes"])


def test_pair_correctness_is_a_row_of_table_3_correlated_with_the_human_ranking(campaign):
    run(campaign)
    rows = {row["name"]: row for row in campaign.report["table"]["rows"]}
    # pair correctness orders the systems as the humans do (ranked > shortest > longest)
    assert [row["name"] for row in campaign.report["table"]["rows"]][:2] == [CHOSEN, PAIRS]
    assert rows[PAIRS]["kind"] == "point"
    assert rows[PAIRS]["spearman"]["value"] == pytest.approx(1.0)
    assert rows[PAIRS]["kendall"]["value"] == pytest.approx(1.0)
    assert rows[PAIRS]["spearman"]["n"] == 3


def test_the_report_page_shows_the_pair_row_and_the_per_type_table(admin_client, campaign):
    run(campaign)
    html = admin_client.get(reverse("campaign-report", args=[campaign.name])).content.decode()
    # Table 3 has the pair-correctness row
    correlations = html.split('id="correlations"', 1)[1].split("</section>", 1)[0]
    assert f"<td>{PAIRS}</td><td>1.000 (p=" in correlations
    # and the per-type table has a column per system, a row per type, subtype and criterion
    table = html.split('id="pair-types"', 1)[1].split("</section>", 1)[0]
    header = table.split("<thead>", 1)[1].split("</thead>", 1)[0]
    systems = [c.split("</th>")[0] for c in header.split('<th class="num">')[1:]]
    assert sorted(systems) == sorted(EXPECTED)
    body = table.split("<tbody>", 1)[1]
    keys = [row.split('"', 1)[0] for row in body.split('<tr data-key="')[1:]]
    assert keys == ["all", "content", "content/noun", "function", "sentence", "sentence/negation", "el", "ml"]
    for key, label in (("all", "all pairs"), ("content/noun", "noun"), ("el", "criterion EL")):
        assert body.split(f'<tr data-key="{key}">', 1)[1].split("</td>", 1)[0].endswith(f">{label}")
    column = {"all pairs": "all"}
    for name, cells in EXPECTED.items():
        for label, (n, right) in cells.items():
            row = body.split(f'<tr data-key="{column.get(label, label)}">', 1)[1].split("</tr>", 1)[0]
            values = [cell.split("</td>")[0] for cell in row.split('<td class="num">')[1:]]
            value = values[systems.index(name)]
            assert value.startswith(f"{right / n:.3f} "), (name, label, value)
            assert value.split(' <span class="muted too-few">')[0].endswith(f"({n})</span>")
    # beside the per-error-label table of the test set
    assert html.index("Error label") < html.index('id="pair-types"')


def test_a_pair_set_without_accepted_pairs_is_noted_and_the_rest_runs(campaign):
    # given a campaign whose pair set has only pending pairs
    campaign.pair_set.pairs.update(review="pending")
    # when it runs
    job = run(campaign)
    # then the test-set part is reported, the pair part is not, and a note says why
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert not PairEvaluation.objects.exists()
    assert PAIRS not in [row["name"] for row in campaign.report["table"]["rows"]]
    assert campaign.report["pair_breakdown"] is None
    assert "pairs: set okano has no accepted pair yet (7 pending review)" in campaign.report["notes"]


def test_pairs_accepted_after_a_run_are_scored_when_the_campaign_runs_again(campaign):
    # given a finished campaign, then a reviewer who accepts the pending pair
    run(campaign)
    campaign.pair_set.pairs.filter(review="pending").update(review="accepted")
    # when the campaign runs again
    run(campaign)
    # then every system's evaluation counts seven pairs, in the report too
    assert set(PairEvaluation.objects.values_list("summary__n", flat=True)) == {7}
    assert {row["pairs"]["n"] for row in campaign.report["leaderboard"]} == {7}


def test_the_campaign_admin_form_has_the_pair_set(admin_client, campaign):
    html = admin_client.get(reverse("admin:evaluation_campaign_change", args=[campaign.pk])).content.decode()
    assert 'name="pair_set"' in html


def test_a_pair_evaluation_is_started_from_the_admin(admin_client, campaign, sent_tasks):
    # when a researcher starts the evaluation of a system on the pair set
    response = admin_client.post(
        reverse("admin:evaluation_pairevaluation_add"),
        {"pair_set": campaign.pair_set.pk, "system": System.objects.get(name="shortest").pk},
    )
    # then its job is created for the gpu queue and the page goes to it
    job = Job.objects.get(kind="evaluate_pairs")
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", args=[job.pk])
    evaluation = PairEvaluation.objects.get()
    assert (evaluation.system.name, evaluation.job_id) == ("shortest", job.pk)
    # and the changelist shows it
    html = admin_client.get(reverse("admin:evaluation_pairevaluation_changelist")).content.decode()
    assert "shortest" in html and "okano" in html


def test_the_campaign_command_creates_a_campaign_ranked_by_pairs_alone(campaign):
    # when a campaign is created with a pair set and no test set
    call_command("campaign", "create", "pairs-only", "--pair-set", "okano", "--system", "shortest")
    # then its systems are ranked on the pairs
    created = Campaign.objects.get(name="pairs-only")
    assert (created.pair_set.name, created.testset, [s.name for s in created.systems.all()]) == (
        "okano",
        None,
        ["shortest"],
    )
    # and an unknown pair set is refused
    with pytest.raises(CommandError, match="no pair set 'nope'"):
        call_command("campaign", "create", "other", "--pair-set", "nope")


def test_each_leaderboard_value_sits_under_its_own_header(admin_client, campaign):
    # given a report with pair correctness and, as a campaign with a repository adds, RANDOM trials
    run(campaign)
    report = campaign.report
    for row in report["leaderboard"]:
        row["random"] = {"mean": 0.111, "min": 0.1, "max": 0.2, "trials": 9}
    Campaign.objects.filter(pk=campaign.pk).update(report=report)
    # when the report page shows the leaderboard
    html = admin_client.get(reverse("campaign-report", args=[campaign.name])).content.decode()
    board = html.split('id="leaderboard"', 1)[1].split("</section>", 1)[0]
    headers = re.findall(r"<th[^>]*>(.*?)</th>", board.split("</thead>", 1)[0])
    first_row = board.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", first_row, re.S)
    # then the RANDOM column holds the RANDOM mean and the pair column the pair correctness
    assert cells[headers.index("RANDOM mean [min, max]")].startswith("0.111 ")
    assert cells[headers.index("RANDOM mean [min, max]")].endswith("(9)</span>")
    pairs = cells[headers.index("Pair correctness [95 % CI]")]
    assert pairs.endswith(f"({EXPECTED['ranked']['all pairs'][0]})</span>") and not pairs.startswith("0.111")


def test_the_per_type_table_shows_chance_marks_small_types_and_explains_ml_pairs(admin_client, campaign):
    run(campaign)
    html = admin_client.get(reverse("campaign-report", args=[campaign.name])).content.decode()
    table = html.split('id="pair-types"', 1)[1].split("</section>", 1)[0]
    assert "chance 0.500" in table and f"fewer than {MIN_PAIRS_TO_RANK} pairs: too few to rank" in table
    # every group of this small set is below the bar
    row = table.split('<tr data-key="function">', 1)[1].split("</tr>", 1)[0]
    assert "too few to rank" in row
    assert 'id="ml-pairs-note"' in table and "can fall as it improves" in table
