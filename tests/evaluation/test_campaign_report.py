"""The campaign report: what it holds, the dashboard pages, the recompute button and the report command."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.models import Job, JobStatus
from core.services.jobs import job_execute
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign, System, SystemKind
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.campaign_report import campaign_report_compute, campaign_report_refresh
from evaluation.services.campaigns import campaign_start
from tests.evaluation.campaign_helpers import build_repository, build_testset, campaign_with, rated_generation
from tests.factories import UserFactory, staff_with

EVIL = "<script>alert(1)</script>"
PLUGINS = {"shortest": "ShortestWinsPlugin", "longest": "LongestWinsPlugin", EVIL: "ShortestWinsPlugin"}
HUMAN = {"shortest": (4, 5), "longest": (1, 2), EVIL: (3, 3)}


@pytest.fixture
def reported(db, scored_question):
    """A campaign of three plugin systems (one with a name that is HTML), run: its report is stored."""
    testset = build_testset(scored_question, questions=6)
    keys = [f"q{question_id}" for question_id in testset.items.values_list("question_id", flat=True)]
    systems, generations = [], []
    for name, plugin in PLUGINS.items():
        # created directly: register_system would refuse a name that is not a slug, an import might not
        system = System.objects.create(name=name, kind=SystemKind.PLUGIN, plugin=f"tests.evaluation.plugins.{plugin}")
        systems.append(system)
        generations.append(rated_generation(system, [HUMAN[name]] * len(keys), dataset=testset.dataset, keys=keys))
    campaign = campaign_with(
        systems=systems,
        generations=generations,
        testset=testset,
        repository=build_repository(),
        random_trials=8,
        bootstrap_resamples=50,
        description="Plugins & <b>friends</b>",
    )
    job = campaign_start(campaign=campaign, enqueue=False)
    job_execute(job_id=job.pk)
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    campaign.refresh_from_db()
    yield campaign
    scorer_cache_clear()


def page(client, campaign) -> str:
    response = client.get(reverse("campaign-report", args=[campaign.name]))
    assert response.status_code == 200
    return response.content.decode()


def test_report_page_shows_leaderboard_table_box_plot_and_breakdown(admin_client, reported):
    html = page(admin_client, reported)
    for part in ('id="leaderboard"', 'id="correlations"', 'id="box-plot"', "Error label", "off-topic"):
        assert part in html
    for row in ("CHOSEN accuracy", "RANDOM accuracy", "BLEU-1", "ROUGE-L", "Human (split-half)"):
        assert f"<td>{row}</td>" in html
    assert '<div class="chart"><svg' in html and "<?xml" not in html


def test_report_page_escapes_system_names_and_descriptions(admin_client, reported):
    html = page(admin_client, reported)
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Plugins &amp; &lt;b&gt;friends&lt;/b&gt;" in html


def test_report_page_reads_the_cached_report_in_a_fixed_number_of_queries(
    admin_client, reported, django_assert_num_queries
):
    # session, user, campaign with its job: whatever the size of the report
    with django_assert_num_queries(3):
        page(admin_client, reported)
    report = dict(reported.report)
    report["leaderboard"] = report["leaderboard"] * 20
    Campaign.objects.filter(pk=reported.pk).update(report=report)
    with django_assert_num_queries(3):
        page(admin_client, reported)


def test_campaign_list_in_one_query_for_all_campaigns(admin_client, reported, django_assert_num_queries):
    for n in range(5):
        campaign_with(f"more-{n}", systems=System.objects.all())
    with django_assert_num_queries(3):
        html = admin_client.get(reverse("campaign-list")).content.decode()
    # six campaigns, the menu's link to this list and the "New campaign" link
    assert html.count('href="/campaigns/') == 6 + 1 + 1
    assert reverse("campaign-report", args=[reported.name]) in html


def test_pages_are_for_staff_only(client, reported):
    client.force_login(UserFactory())
    assert client.get(reverse("campaign-list")).status_code == 302
    assert client.get(reverse("campaign-report", args=[reported.name])).status_code == 302
    assert client.post(reverse("campaign-recompute", args=[reported.name])).status_code == 302
    assert Job.objects.filter(kind=CampaignParams.kind).count() == 1


def test_staff_without_the_campaign_permission_cannot_read_reports(client, reported):
    client.force_login(staff_with())
    assert client.get(reverse("campaign-report", args=[reported.name])).status_code == 403
    assert client.get(reverse("campaign-report-json", args=[reported.name])).status_code == 403


def test_recomputing_a_report_needs_the_change_permission(client, reported):
    client.force_login(staff_with("evaluation.view_campaign"))
    assert client.get(reverse("campaign-report", args=[reported.name])).status_code == 200
    assert client.post(reverse("campaign-recompute", args=[reported.name])).status_code == 403
    assert Job.objects.filter(kind=CampaignParams.kind).count() == 1


def test_a_campaign_without_a_report_says_so(admin_client, db):
    campaign = campaign_with("empty")
    assert 'id="no-report"' in page(admin_client, campaign)


def test_recompute_button_enqueues_the_campaign_job_after_commit(
    admin_client, reported, django_capture_on_commit_callbacks
):
    before = reported.report_at
    # when the researcher presses "Recompute" (the job is sent to Celery only once the request commits)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(reverse("campaign-recompute", args=[reported.name]))
    assert response.status_code == 302
    job = Job.objects.filter(kind=CampaignParams.kind).latest("id")
    assert job.status == JobStatus.PENDING and len(callbacks) == 1
    # then running the commit callback runs the job (Celery is eager in tests), which refreshes the report
    callbacks[0]()
    reported.refresh_from_db()
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    assert reported.report_at > before and reported.job_id == job.pk


def test_report_json_download(admin_client, reported):
    response = admin_client.get(reverse("campaign-report-json", args=[reported.name]))
    assert response.json() == reported.report


def test_command_writes_a_self_contained_html_report(reported, tmp_path):
    out = tmp_path / "report.html"
    call_command("report", "--campaign", reported.name, "--format", "html", "--output", str(out))
    html = out.read_text()
    assert html.startswith("<!doctype html>")
    assert "<style>" in html and 'rel="stylesheet"' not in html and "--accent" in html
    assert "<svg" in html and "CHOSEN accuracy" in html
    assert EVIL not in html


def test_command_writes_the_stored_report_as_json_or_recomputes_it(reported, tmp_path):
    out = tmp_path / "report.json"
    call_command("report", "--campaign", reported.name, "--format", "json", "--output", str(out))
    assert json.loads(out.read_text()) == reported.report
    call_command("report", "--campaign", reported.name, "--format", "json", "--output", str(out), "--recompute")
    recomputed = json.loads(out.read_text())
    assert recomputed["computed_at"] > reported.report["computed_at"]
    assert recomputed["table"] == reported.report["table"]  # seeded: the same bootstrap CIs


def test_command_names_an_unknown_campaign(db):
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        call_command("report", "--campaign", "nope")


def test_report_breakdown_and_random_ranges_come_from_the_stored_results(reported):
    report = reported.report
    board = {row["system"]: row for row in report["leaderboard"]}
    # the longest candidate is never the dense one here: per label, per system, from the evaluation summary
    from evaluation.models import Evaluation

    for name in PLUGINS:
        summary = Evaluation.objects.get(system__name=name).summary
        assert (
            report["breakdown"]["per_label"]["off-topic"][name]["accuracy"]
            == summary["per_label"]["off-topic"]["accuracy"]
        )
        accuracies = [r.accuracy for r in reported.random_results.filter(system__name=name)]
        assert board[name]["random"] == pytest.approx(
            {"mean": sum(accuracies) / 8, "min": min(accuracies), "max": max(accuracies), "trials": 8}
        )


def test_an_empty_campaign_reports_what_is_missing(db):
    report = campaign_report_compute(campaign=campaign_with("bare"))
    assert report["leaderboard"] == [] and report["table"] is None
    assert any(n.startswith("no human ratings") for n in report["notes"])
    assert any(n.startswith("no test set") for n in report["notes"])


def test_external_systems_alone_get_the_reference_based_rows(db):
    # given three imported systems with ratings and references, no test set
    systems = [System.objects.create(name=n, kind=SystemKind.EXTERNAL) for n in ("a", "b", "c")]
    generations = [
        rated_generation(s, [(1 + i, 2 + i), (2 + i, 2)], keys=[f"{s.name}1", f"{s.name}2"])
        for i, s in enumerate(systems)
    ]
    campaign = campaign_with(systems=systems, generations=generations, bootstrap_resamples=20)
    report = campaign_report_refresh(campaign=campaign)
    assert [r["name"] for r in report["table"]["rows"]] == [
        "BLEU-1",
        "BLEU-2",
        "METEOR",
        "ROUGE-L",
        "Human (split-half)",
    ]
    assert [r["system"] for r in report["leaderboard"]] == ["c", "b", "a"]
    assert Campaign.objects.get(pk=campaign.pk).report == report


def test_every_leaderboard_cell_is_the_value_report_json_holds(admin_client, reported):
    import re

    from core.readable import number

    html = page(admin_client, reported)
    report = admin_client.get(reverse("campaign-report-json", args=[reported.name])).json()
    board = html.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    headers = re.findall(r"<th[^>]*>(.*?)</th>", board.split("</thead>", 1)[0])
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in board.split("<tbody>", 1)[1].split("</tr>")[:-1]]
    plain = [[re.sub(r"<[^>]+>", "", cell).strip() for cell in row] for row in rows]

    def expected(row: dict, header: str) -> str:
        if header == "System":
            return row["system"]
        if header == "Human":
            return number(row["human"])
        if header == "Rated":
            return str(row["rated_responses"])
        if header.startswith("CHOSEN"):
            return f"{number(row['accuracy'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]"
        if header.startswith("RANDOM"):
            r = row["random"]
            return f"{number(r['mean'])} [{number(r['min'])}, {number(r['max'])}] ({r['trials']})"
        return number(row["metrics"].get(header), 4)  # a reference-based metric

    assert len(plain) == len(report["leaderboard"]) == 3
    for cells, row in zip(plain, report["leaderboard"], strict=True):
        assert [c.replace("&lt;", "<").replace("&gt;", ">") for c in cells] == [expected(row, h) for h in headers]
