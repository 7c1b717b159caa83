from django.urls import reverse

from tests.factories import UserFactory


def test_annotator_home_page_does_not_show_research_data(client, db):
    client.force_login(UserFactory(username="ann"))
    page = client.get(reverse("home")).content.decode()
    assert "Welcome, ann" in page and "Recent jobs" not in page


def test_home_requires_login(client, db):
    assert client.get(reverse("home")).status_code == 302
