"""A unit's page shows the ground truth among the responses, and nothing in it tells which one it is:
not a word, not an attribute, not the markup around it (the annotator's page, the crowd page and
MTurk's preview)."""

import re

import pytest
from django.urls import reverse

from tests.security.authz_world import GT_A, GT_CROWD, HIT_ID, world_kept

RESPONSE = re.compile(r'<fieldset class="response".*?</fieldset>', re.S)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_kept(django_db_blocker) as built:
        yield built


def page_of(client, world, which: str) -> tuple[str, str]:
    """(page, the ground-truth marker of its dataset)."""
    if which == "annotator":
        client.force_login(world.users["annotator_a"])
        return client.get(reverse("annotate-unit", args=[world.values["assignment_id"]])).content.decode(), GT_A
    if which == "crowd":
        return client.get(reverse("crowd-unit", args=[world.values["unit_token"]])).content.decode(), GT_CROWD
    params = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": HIT_ID}
    return client.get(reverse("crowd-mturk"), params).content.decode(), GT_CROWD


def skeleton(block: str) -> str:
    """A response's markup without what differs between responses by design: its text, its random
    key and its position."""
    block = re.sub(r'<legend class="response-text">.*?</legend>', "<legend>TEXT</legend>", block, flags=re.S)
    block = re.sub(r'name="(score|labels)-[0-9a-f]+"', r'name="\1-KEY"', block)
    return re.sub(r'id="response-\d+"', 'id="response-N"', block)


PAGES = ["annotator", "crowd", "mturk-preview"]


@pytest.mark.parametrize("which", PAGES)
def test_the_ground_truth_is_one_of_the_responses(db, world, client, which):
    html, marker = page_of(client, world, which)
    truths = [block for block in RESPONSE.findall(html) if marker in block]
    assert len(RESPONSE.findall(html)) >= 2 and len(truths) == 1


@pytest.mark.parametrize("which", PAGES)
def test_every_response_has_the_same_markup(db, world, client, which):
    html, _ = page_of(client, world, which)
    assert len({skeleton(block) for block in RESPONSE.findall(html)}) == 1


@pytest.mark.parametrize("which", PAGES)
def test_no_word_and_no_id_marks_the_ground_truth(db, world, client, which):
    html, _ = page_of(client, world, which)
    assert "ground" not in html.lower() and "truth" not in html.lower()
    numbers = set(re.findall(r'(?:id|name|value|class|data-[\w-]+)="[A-Za-z_-]*?(\d+)"', html))
    assert not numbers & {str(pk) for pk in world.values["candidate_ids"]} - {str(v) for v in range(6)}
