"""Crowd scores count only once the platform confirms the assignment: forged MTurk work (invented
assignment and worker ids on a real HIT) is stored, never counted, and discarded by the sync once
MTurk's deadline for the assignment has passed; the unit goes back to real workers."""

import importlib
import logging
import re
from datetime import timedelta

from django.urls import reverse

from annotation.models import QuestionWork, Score
from annotation.selectors import candidate_score_counts, filter_preview, filter_rules_current
from crowd.models import CrowdAssignment
from crowd.selectors import crowd_batch_status
from crowd.services.batches import crowd_batch_sync
from crowd.services.review import crowd_assignment_review, link_approvals_import

from .conftest import hit_id
from .link_helpers import work_through
from .mturk_helpers import list_params, listed, publish, work

SANDBOX = "https://workersandbox.mturk.com"


def forged_id(n: int) -> str:
    """Well-formed (30 characters, like MTurk's own), but never issued by MTurk."""
    return f"3FAKE{n:025d}"


def forge(client, *, task, n: int, value: str = "5"):
    """An attacker opens our ExternalQuestion page with invented ids and posts scores."""
    client.cookies.clear()
    page = client.get(
        reverse("crowd-mturk"),
        {
            "assignmentId": forged_id(n),
            "hitId": task.external_id,
            "workerId": f"AFAKEWORKER{n}",
            "turkSubmitTo": SANDBOX,
        },
    ).content.decode()
    keys = re.findall(r'name="score-([0-9a-f]+)" value="0"', page)
    action = re.search(r'id="unit-form" action="([^"]+)"', page).group(1)
    return client.post(action, {f"score-{k}": value for k in keys} | {"duration_ms": "9000"})


def nothing_listed(mturk, tasks):
    for task in tasks:
        mturk.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, list_params(task))


def counted_scores(dataset) -> int:
    return sum(row["n_scores"] for row in candidate_score_counts(dataset=dataset, rules=filter_rules_current()))


def taken_earlier(seconds: int) -> None:
    CrowdAssignment.objects.update(created_at=CrowdAssignment.objects.first().created_at - timedelta(seconds=seconds))


def test_forged_mturk_work_is_stored_but_never_counted(client, published_tasks, dataset):
    for n in range(1, 4):
        assert forge(client, task=published_tasks[0], n=n).status_code == 200
    assert Score.objects.count() == 3 * 2
    assert counted_scores(dataset) == 0
    assert crowd_batch_status(batch=published_tasks[0].batch)["scores_awaiting_confirmation"] == 6
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    assert preview.questions_by_ground_truth["passed"] == 0
    assert preview.candidates_by_decision["acceptable"] == 0


def test_a_sync_discards_forged_work_once_mturk_would_have_listed_it(
    client, mturk, mturk_provider, published_tasks, dataset, caplog
):
    for n in range(1, 4):
        forge(client, task=published_tasks[0], n=n)
    nothing_listed(mturk, published_tasks)
    early = crowd_batch_sync(batch=published_tasks[0].batch, provider=mturk_provider)
    assert early.discarded == [] and Score.objects.count() == 6  # MTurk's deadline has not passed
    taken_earlier(1800 + 1)  # the HIT's AssignmentDurationInSeconds
    nothing_listed(mturk, published_tasks)
    with caplog.at_level(logging.WARNING):
        report = crowd_batch_sync(batch=published_tasks[0].batch, provider=mturk_provider)
    assert sorted(report.discarded) == [forged_id(n) for n in range(1, 4)]
    assert Score.objects.count() == 0
    assert set(CrowdAssignment.objects.values_list("status", flat=True)) == {"discarded"}
    assert QuestionWork.objects.get(question=published_tasks[0].question).slots_taken == 0
    assert "unknown to the platform" in caplog.text


def test_a_discarded_assignment_cannot_be_submitted_again(client, mturk, mturk_provider, published_tasks):
    forge(client, task=published_tasks[0], n=1)
    taken_earlier(1801)
    nothing_listed(mturk, published_tasks)
    crowd_batch_sync(batch=published_tasks[0].batch, provider=mturk_provider)
    again = client.get(
        reverse("crowd-mturk"),
        {"assignmentId": forged_id(1), "hitId": hit_id(1), "workerId": "AFAKEWORKER1", "turkSubmitTo": SANDBOX},
    )
    assert again.status_code == 403 and Score.objects.count() == 0


def test_a_real_workers_scores_count_once_mturk_lists_the_assignment(mturk, mturk_batch, mturk_provider, dataset):
    first, second = publish(mturk, mturk_batch)
    ca = work(first, "AW1", 1, value=4)
    assert counted_scores(dataset) == 0
    mturk.add_response("list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)]}, list_params(first))
    mturk.add_response("list_assignments_for_hit", {"Assignments": []}, list_params(second))
    report = crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert report.scores_confirmed == 2 and counted_scores(dataset) == 2
    assert set(Score.objects.filter(assignment=ca.assignment).values_list("counted", flat=True)) == {True}


def test_a_rejected_assignment_stops_counting(mturk, mturk_batch, mturk_provider, dataset):
    first, second = publish(mturk, mturk_batch)
    work(first, "AW1", 1)
    mturk.add_response("list_assignments_for_hit", {"Assignments": [listed(1, "AW1", first)]}, list_params(first))
    mturk.add_response("list_assignments_for_hit", {"Assignments": []}, list_params(second))
    crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    ca = CrowdAssignment.objects.get()
    mturk.add_response("reject_assignment", {}, {"AssignmentId": ca.external_id, "RequesterFeedback": "random"})
    crowd_assignment_review(crowd_assignment=ca, approve=False, feedback="random", provider=mturk_provider)
    assert counted_scores(dataset) == 0 and Score.objects.count() == 2


def test_an_assignment_listed_for_another_worker_does_not_confirm_ours(mturk, mturk_batch, mturk_provider, dataset):
    first, second = publish(mturk, mturk_batch)
    work(first, "AW1", 1)
    impostor = listed(1, "AW9", first)  # the same assignment id, reported for someone else
    mturk.add_response("list_assignments_for_hit", {"Assignments": [impostor]}, list_params(first))
    mturk.add_response("list_assignments_for_hit", {"Assignments": []}, list_params(second))
    crowd_batch_sync(batch=mturk_batch, provider=mturk_provider)
    assert counted_scores(dataset) == 0


def test_link_scores_count_once_the_approvals_file_approves_them(client, link_batch, write_file, dataset):
    work_through(client, link_batch, worker="P1", value="4")
    client.cookies.clear()
    work_through(client, link_batch, worker="P2", value="4")
    assert Score.objects.count() == 8 and counted_scores(dataset) == 0
    path = write_file("approvals.csv", "worker_id,status\nP1,APPROVED\nP2,REJECTED\n")
    counts = link_approvals_import(batch=link_batch, path=path)
    assert counts["scores_confirmed"] == 4
    assert set(Score.objects.filter(counted=True).values_list("annotator__external_id", flat=True)) == {"P1"}


def test_the_data_migration_uses_each_providers_rule(dataset):
    """Scores saved before confirmation existed stop counting by the rule the providers apply now."""
    from crowd.models import CrowdProvider
    from crowd.providers.registry import provider_class

    rules = importlib.import_module("crowd.migrations.0003_unconfirmed_scores_uncounted").CONFIRMED
    assert set(rules) == {p.value for p in CrowdProvider}
    for name, rule in rules.items():
        assert rule == provider_class(name)().confirmed(), name


def test_the_id_forms_are_the_ones_of_mturks_service_model():
    import botocore.session

    from crowd.providers.mturk_client import MTURK_ENTITY_ID, MTURK_WORKER_ID

    model = botocore.session.get_session().get_service_model("mturk")
    for ours, shape in ((MTURK_ENTITY_ID, "EntityId"), (MTURK_WORKER_ID, "CustomerId")):
        meta = model.shape_for(shape).metadata
        assert ours.pattern.replace("{1,64}", "+").replace("{1,63}", "+") == meta["pattern"]
        assert meta["max"] == 64


def test_a_worker_id_mturk_cannot_have_issued_is_refused(client, published_tasks):
    page = client.get(
        reverse("crowd-mturk"),
        {"assignmentId": forged_id(1), "hitId": hit_id(1), "workerId": "FAKEWORKER0", "turkSubmitTo": SANDBOX},
    )
    assert page.status_code == 403 and "workerId is missing or malformed" in page.content.decode()
    assert not CrowdAssignment.objects.exists()
