"""A campaign created and started from one page, reached from the dataset's workspace."""

import pytest
from django.urls import reverse

from core.models import Job
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign, System
from tests.factories import staff_with

from .campaign_helpers import build_repository, build_testset


@pytest.fixture
def release(db, scored_question):
    testset = build_testset(scored_question, name="r1", dataset="camp")
    build_repository(name="films")
    System.objects.create(name="short", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin")
    System.objects.create(name="long", kind="plugin", plugin="tests.evaluation.plugins.LongestWinsPlugin")
    System.objects.create(name="zhao-x", kind="external")
    return testset


def post(client, **fields):
    data = {"name": "first", "testset": "", "random_trials": "5", "description": "", **fields}
    return client.post(reverse("campaign-new") + "?dataset=camp", data)


def test_the_workspace_offers_a_campaign_on_the_newest_release(admin_client, release):
    page = admin_client.get(reverse("dashboard-dataset", args=["camp"])).content.decode()
    step = page.split('id="step-campaigns"')[1].split("</section>")[0]
    assert "No campaign yet" in step and reverse("campaign-new") + "?dataset=camp" in step
    form = admin_client.get(reverse("campaign-new") + "?dataset=camp").content.decode()
    assert f'<option value="{release.pk}" selected>' in form and 'value="camp-campaign"' in form
    # the systems that are scored are offered; a system of imported responses is not
    assert " short</label>" in form and " long</label>" in form and "zhao-x" not in form


def test_creating_a_campaign_starts_its_job_and_leads_to_its_report(admin_client, release):
    systems = [str(pk) for pk in System.objects.filter(kind="plugin").values_list("pk", flat=True)]
    response = post(admin_client, testset=str(release.pk), systems=systems, repository="")
    assert response.status_code == 302 and response["Location"] == reverse("campaign-report", args=["first"])
    campaign = Campaign.objects.get(name="first")
    assert campaign.testset == release and campaign.systems.count() == 2 and campaign.random_trials == 5
    job = Job.objects.get(kind=CampaignParams.kind)
    assert campaign.job_id == job.pk and job.created_by.username == "admin"
    # and the workspace lists it
    page = admin_client.get(reverse("dashboard-dataset", args=["camp"])).content.decode()
    step = page.split('id="step-campaigns"')[1]
    assert reverse("campaign-report", args=["first"]) in step.split("</section>")[0]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"systems": []}, "choose at least one system"),
        ({"testset": ""}, "choose a test set or a pair set"),
        ({"name": "new"}, "names a page under /campaigns/"),
        ({"name": "bad name"}, "Enter a valid"),
        ({"random_trials": "0"}, "greater than or equal to 1"),
    ],
)
def test_a_bad_campaign_is_a_400_and_creates_nothing(admin_client, release, fields, message):
    systems = [str(System.objects.get(name="short").pk)]
    response = post(admin_client, **{"testset": str(release.pk), "systems": systems, **fields})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Campaign.objects.exists() and not Job.objects.filter(kind=CampaignParams.kind).exists()


def test_a_taken_name_is_a_400(admin_client, release):
    systems = [str(System.objects.get(name="short").pk)]
    post(admin_client, testset=str(release.pk), systems=systems)
    response = post(admin_client, testset=str(release.pk), systems=systems)
    assert response.status_code == 400 and "exists already" in response.content.decode()
    assert Campaign.objects.count() == 1 and Job.objects.filter(kind=CampaignParams.kind).count() == 1


def test_creating_needs_the_add_permission(client, release):
    client.force_login(staff_with("evaluation.view_campaign"))
    assert client.get(reverse("campaign-new")).status_code == 403
    client.force_login(staff_with("evaluation.view_campaign", "evaluation.add_campaign"))
    assert client.get(reverse("campaign-new")).status_code == 200


def test_the_campaign_list_links_the_new_campaign_page(admin_client, release):
    assert reverse("campaign-new") in admin_client.get(reverse("campaign-list")).content.decode()
