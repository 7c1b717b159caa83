"""A dialogue looks the same wherever it is scored: the annotator page, MTurk's HIT preview and the
accepted HIT show the same speakers on the same sides (one rule, annotation.selectors)."""

import re

from django.urls import reverse

from annotation.models import Annotator, DatasetMembership, Turn
from tests.factories import UserFactory

from .conftest import assignment_id, hit_id

TURN = re.compile(r'<li class="turn (left|right)"><span class="speaker">([^<]*)</span><span class="bubble">([^<]*)<')


def turns(response) -> list[tuple[str, str, str]]:
    assert response.status_code == 200
    return TURN.findall(response.content.decode())


def test_a_dialogue_with_named_speakers_is_shown_alike_on_the_annotator_and_crowd_pages(client, published_tasks):
    # given dialogues whose speakers are named, one of them speaking twice in a row
    for task in published_tasks:
        for position, name in enumerate(["Ann", "Ann", "Bob"]):
            Turn.objects.filter(context_id=task.question.context_id, position=position).update(speaker=name)
    texts = list(
        Turn.objects.filter(context_id=published_tasks[0].question.context_id)
        .order_by("position")
        .values_list("text", flat=True)
    )
    expected = [("left", "Ann", texts[0]), ("left", "Ann", texts[1]), ("right", "Bob", texts[2])]
    # when an internal annotator opens their next unit
    user = UserFactory(username="ann")
    annotator = Annotator.objects.create(user=user, provider="internal", external_id="ann")
    DatasetMembership.objects.create(annotator=annotator, dataset=published_tasks[0].batch.dataset)
    client.force_login(user)
    annotator_page = client.get(reverse("annotate-next"), follow=True)
    # and an MTurk worker previews a HIT, then accepts it
    preview = client.get(reverse("crowd-mturk"), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": hit_id(1)})
    accepted = client.get(
        reverse("crowd-mturk"),
        {
            "assignmentId": assignment_id(1),
            "hitId": hit_id(1),
            "workerId": "AW1",
            "turkSubmitTo": "https://workersandbox.mturk.com",
        },
    )
    # then every page shows Ann's two turns on the left and Bob's on the right
    assert turns(annotator_page) == expected
    assert turns(preview) == expected
    assert turns(accepted) == expected
