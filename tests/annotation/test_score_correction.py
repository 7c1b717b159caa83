"""An annotator corrects a unit's scores for a few minutes after submitting it: the old value is
kept for the record, only the new one counts, and the rule decisions follow."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, DatasetMembership, Score, ScoreRevision
from annotation.selectors import candidate_score_counts, filter_rules_current
from annotation.selectors_annotators import unit_correctable
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.correction import unit_correct
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory, UserFactory

PASSWORD = "a-long-password"


@pytest.fixture
def submitted(db):
    """An annotator's submitted unit: every response scored 1."""
    dataset = DatasetFactory(name="fix", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    for i in range(3):
        CandidateFactory(question=question, text=f"reply {i}")
    annotation_open(dataset=dataset)
    annotator = AnnotatorFactory(user=UserFactory(username="ann", password=PASSWORD))
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    assignment = unit_next(annotator=annotator)
    unit_submit(assignment_id=assignment.pk, annotator=annotator, answers=answers(assignment, 1))
    return annotator, Assignment.objects.get(pk=assignment.pk)


def answers(assignment, value, **overrides):
    return {item["key"]: Answer(overrides.get(item["key"], value)) for item in assignment.items}


def test_a_corrected_score_replaces_the_old_one_which_is_kept(submitted):
    annotator, assignment = submitted
    first = assignment.items[0]["key"]
    assert (
        unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=answers(assignment, 1, **{first: 4}))
        == 1
    )
    corrected = Score.objects.get(candidate_id=assignment.items[0]["candidate_id"], annotator=annotator)
    assert corrected.value == 4
    assert list(ScoreRevision.objects.values_list("score_id", "value")) == [(corrected.pk, 1)]
    # one score per annotator and response still: the filter rules count the new value once
    counts = {
        row["id"]: row
        for row in candidate_score_counts(dataset=assignment.question.dataset, rules=filter_rules_current())
    }
    assert counts[corrected.candidate_id]["n_scores"] == 1 and counts[corrected.candidate_id]["n_acceptable"] == 1
    assert Score.objects.count() == len(assignment.items)


def test_sending_the_same_correction_twice_changes_nothing_the_second_time(submitted):
    annotator, assignment = submitted
    fixed = answers(assignment, 2)
    assert unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=fixed) == len(assignment.items)
    assert unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=fixed) == 0
    assert ScoreRevision.objects.count() == len(assignment.items)


def test_after_the_window_a_unit_cannot_be_corrected(submitted, settings):
    annotator, assignment = submitted
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now() - timedelta(minutes=11))
    with pytest.raises(UserError, match="time to correct this unit has passed"):
        unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=answers(assignment, 5))
    assert not ScoreRevision.objects.exists() and set(Score.objects.values_list("value", flat=True)) == {1}
    assert unit_correctable(annotator=annotator) is None
    settings.WELLCHOSEN_SCORE_CORRECTION_MINUTES = 0
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now())
    with pytest.raises(UserError, match="only a submitted unit"):
        unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=answers(assignment, 5))


def test_nobody_corrects_another_annotators_unit(submitted):
    _, assignment = submitted
    with pytest.raises(UserError, match="no such unit"):
        unit_correct(assignment_id=assignment.pk, annotator=AnnotatorFactory(), answers=answers(assignment, 5))


def test_a_correction_is_checked_like_a_submission(submitted):
    annotator, assignment = submitted
    with pytest.raises(UserError, match="not an integer from 0 to 5"):
        unit_correct(assignment_id=assignment.pk, annotator=annotator, answers=answers(assignment, 9))
    with pytest.raises(UserError, match="have no score yet"):
        unit_correct(assignment_id=assignment.pk, annotator=annotator, answers={})


def test_the_annotator_corrects_on_the_page_linked_from_the_next_one(client, submitted):
    annotator, assignment = submitted
    client.force_login(annotator.user)
    nothing_left = client.get(reverse("annotate-next")).content.decode()
    url = reverse("annotate-correct", args=[assignment.pk])
    assert f'href="{url}" id="correct-last"' in nothing_left
    page = client.get(url).content.decode()
    assert 'id="correcting"' in page and page.count('value="1" checked') == len(assignment.items)
    first = assignment.items[0]["key"]
    posted = {f"score-{item['key']}": "1" for item in assignment.items} | {f"score-{first}": "5"}
    response = client.post(url, posted, follow=True)
    assert "1 score corrected." in response.content.decode()
    assert sorted(Score.objects.values_list("value", flat=True)) == sorted([5] + [1] * (len(assignment.items) - 1))


def test_a_bad_correction_on_the_page_is_a_400(client, submitted):
    annotator, assignment = submitted
    client.force_login(annotator.user)
    response = client.post(reverse("annotate-correct", args=[assignment.pk]), {})
    assert response.status_code == 400 and not ScoreRevision.objects.exists()


def test_the_keyboard_hints_say_how_to_change_a_score_before_submitting(client, db):
    dataset = DatasetFactory(name="keys", adaptive_stopping=False, attention_check_rate=0)
    question = QuestionFactory(dataset=dataset)
    CandidateFactory(question=question, text="reply")
    annotation_open(dataset=dataset)
    annotator = AnnotatorFactory(user=UserFactory(username="keys", password=PASSWORD))
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    client.force_login(annotator.user)
    page = client.get(reverse("annotate-next")).content.decode()
    assert "go back with <kbd>↑</kbd> and type another digit to change a score" in page


def test_after_the_window_the_page_says_so_and_changes_nothing(client, submitted):
    annotator, assignment = submitted
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now() - timedelta(minutes=30))
    client.force_login(annotator.user)
    url = reverse("annotate-correct", args=[assignment.pk])
    assert "cannot be corrected" in client.get(url).content.decode()
    response = client.post(url, {f"score-{item['key']}": "5" for item in assignment.items})
    assert response.status_code == 400 and set(Score.objects.values_list("value", flat=True)) == {1}
    assert 'id="correct-last"' not in client.get(reverse("annotate-next")).content.decode()
