from django.urls import reverse

from tests.factories import UserFactory, staff_with


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
