from django.urls import reverse

from tests.factories import DatasetFactory, UserFactory, staff_with


def test_annotator_home_page_does_not_show_research_data(client, db):
    client.force_login(UserFactory(username="ann"))
    page = client.get(reverse("home")).content.decode()
    assert "Welcome, ann" in page and "Recent jobs" not in page


def test_staff_see_on_home_and_in_the_menu_only_what_they_may_view(client, db):
    client.force_login(staff_with("core.view_job"))
    page = client.get(reverse("home")).content.decode()
    assert "Recent jobs" in page and reverse("job-list") in page
    assert "<h1>Datasets</h1>" not in page and reverse("dashboard") not in page


def test_home_requires_login(client, db):
    assert client.get(reverse("home")).status_code == 302


def test_home_links_each_dataset_to_its_workspace_and_offers_a_new_dataset(admin_client, db):
    DatasetFactory(name="chat")
    page = admin_client.get(reverse("home")).content.decode()
    assert f'<a href="{reverse("dashboard-dataset", args=["chat"])}">chat</a>' in page
    assert f'id="new-dataset" href="{reverse("admin:annotation_dataset_import_dialogues")}"' in page


def test_the_dashboard_index_links_each_dataset_to_its_workspace(admin_client, db):
    DatasetFactory(name="chat")
    page = admin_client.get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("dashboard-dataset", args=["chat"])}">workspace</a>' in page


def test_the_import_form_takes_the_dataset_name_from_the_workspace_link(admin_client, db):
    url = reverse("admin:annotation_dataset_import_dialogues") + "?dataset=chat"
    assert 'name="dataset" value="chat"' in admin_client.get(url).content.decode()
