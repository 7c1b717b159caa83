"""The dataset workspace (/dashboard/<name>/): the pipeline from import to release as steps, each with
its state, numbers, next action and latest job; only this dataset's jobs; a query count that does not
grow with the dataset or its jobs."""

import re

import pytest
from django.urls import reverse

from annotation.job_params import ImportDialoguesParams, QualityRefreshParams
from annotation.models import QuestionWork
from annotation.services.assignment import annotation_open
from annotation.services.quality import quality_refresh
from annotation.workspace import StepStatus, workspace_steps
from core.models import Job
from core.services.jobs import job_create
from evaluation.models import Evaluation, EvaluationStatus
from retrieval.job_params import BuildPoolsParams
from retrieval.models import PoolStatus, QuestionRetrieval
from tests.factories import (
    AnnotatorFactory,
    CandidateFactory,
    DatasetFactory,
    PairFactory,
    PairSetFactory,
    QuestionFactory,
    RepositoryFactory,
    ScoreFactory,
    SystemFactory,
    staff_with,
)
from testsets.job_params import BuildTestsetParams
from testsets.services.build import testset_build
from testsets.services.shortcut_audit import shortcut_audit_run


def page(client, name="ws") -> str:
    response = client.get(reverse("dashboard-dataset", args=[name]))
    assert response.status_code == 200
    return response.content.decode()


def step(html: str, key: str) -> str:
    """The markup of one step of the pipeline."""
    match = re.search(
        rf'<li class="step step-(\w+)" id="step-{key}">(.*?)</li>\s*(?=<li class="step|</ol>)', html, re.S
    )
    assert match, f"no step {key}"
    return f"status={match.group(1)} {match.group(2)}"


def imported(n=3, name="ws"):
    dataset = DatasetFactory(name=name, attention_check_rate=0)
    return dataset, [QuestionFactory(dataset=dataset) for _ in range(n)]


def pooled(dataset, questions):
    repository = RepositoryFactory(name="films")
    for question in questions:
        for i in range(3):
            CandidateFactory(question=question, text=f"false {question.pk}-{i}")
        QuestionRetrieval.objects.create(
            question=question, repository=repository, status=PoolStatus.DONE, pool_size=3, candidates_added=3
        )


def scored(questions, *, gt=5, false=1):
    annotators = AnnotatorFactory.create_batch(5)
    for question in questions:
        for candidate in question.candidates.all():
            for annotator in annotators:
                ScoreFactory(candidate=candidate, annotator=annotator, value=gt if candidate.is_ground_truth else false)


@pytest.fixture
def ready(db):
    """A dataset with pools, open, fully scored, the preview refreshed: a release can be built."""
    dataset, questions = imported()
    pooled(dataset, questions)
    annotation_open(dataset=dataset)
    scored(questions)
    annotation_open(dataset=dataset)  # closes the decided units
    quality_refresh(dataset=dataset)
    return dataset


def test_an_empty_dataset_says_to_import_dialogues(admin_client, db):
    dataset = DatasetFactory(name="ws")
    html = page(admin_client)
    first = step(html, "import")
    assert "status=next" in first and "No dialogues yet: import a file of dialogues" in first
    assert reverse("admin:annotation_dataset_import_dialogues") + "?dataset=ws" in first
    assert "status=waiting" in step(html, "pools") and "Import dialogues first." in step(html, "pools")
    assert "status=waiting" in step(html, "open") and "dashboard-open" not in html
    assert "status=waiting" in step(html, "releases") and dataset.name in html


def test_after_the_import_pools_come_next_and_nothing_is_opened(admin_client, db):
    dataset, _ = imported(3)
    html = page(admin_client)
    assert "status=done" in step(html, "import") and "3 questions from 3 dialogues." in step(html, "import")
    pools = step(html, "pools")
    assert "status=next" in pools and "No candidate pools yet" in pools
    assert reverse("admin:annotation_dataset_pools", args=[dataset.pk]) in pools
    opening = step(html, "open")
    assert "status=waiting" in opening and "No question has a false candidate yet" in opening
    assert reverse("dashboard-open", args=["ws"]) not in html


def test_after_the_pools_opening_is_offered_with_its_count(admin_client, db):
    dataset, questions = imported(3)
    pooled(dataset, questions)
    html = page(admin_client)
    pools = step(html, "pools")
    assert "status=done" in pools and "Every question has a candidate pool (3)." in pools
    assert re.search(r"pools from films</dt><dd>3 <span class=\"muted\">/ 3</span>", pools)
    assert re.search(r"lexical retrieval candidates</dt><dd>9<", pools)
    opening = step(html, "open")
    assert "status=next" in opening and "Open 3 questions for annotation" in opening
    assert reverse("dashboard-open", args=["ws"]) in opening


def test_once_open_the_step_says_why_nothing_more_is_offered(admin_client, db):
    dataset, questions = imported(2)
    pooled(dataset, questions)
    annotation_open(dataset=dataset)
    html = page(admin_client)
    opening = step(html, "open")
    assert "status=done" in opening and "Nothing to open: every question is a unit already." in opening
    assert reverse("dashboard-open", args=["ws"]) not in html
    annotated = step(html, "annotated")
    assert "status=next" in annotated and "2 units still need scores." in annotated
    assert "status=waiting" in step(html, "preview") and "No scores yet" in step(html, "preview")


def test_the_open_button_refuses_when_there_is_nothing_to_open(admin_client, db):
    DatasetFactory(name="ws")
    response = admin_client.post(reverse("dashboard-open", args=["ws"]), follow=True)
    assert "Nothing to open" in response.content.decode()
    assert not QuestionWork.objects.exists()


def test_a_preview_that_yields_no_question_gives_the_reason_instead_of_a_build(admin_client, db):
    dataset, questions = imported(2)
    pooled(dataset, questions)
    annotation_open(dataset=dataset)
    scored(questions, gt=1)  # every ground truth is rejected
    quality_refresh(dataset=dataset)
    html = page(admin_client)
    preview = step(html, "preview")
    assert "The filter preview yields no question: 0 ground truths still undecided, 2 rejected" in preview
    releases = step(html, "releases")
    assert "status=waiting" in releases and "2 rejected" in releases
    assert reverse("admin:annotation_dataset_build", args=[dataset.pk]) not in releases


def test_a_stale_preview_says_scores_arrived_since(admin_client, db):
    dataset, questions = imported(1)
    pooled(dataset, questions)
    ScoreFactory(candidate=questions[0].candidates.first())
    html = page(admin_client)
    assert "Not computed yet: refresh the preview." in step(html, "preview")
    quality_refresh(dataset=dataset)
    ScoreFactory(candidate=questions[0].candidates.last())
    assert "scores arrived since: refresh" in step(page(admin_client), "preview")


def test_a_buildable_preview_leads_to_the_build_form(admin_client, ready):
    html = page(admin_client)
    preview = step(html, "preview")
    assert "status=done" in preview and "A test set built now would have 3 questions." in preview
    assert "status=done" in step(html, "annotated") and "Every unit is done" in step(html, "annotated")
    releases = step(html, "releases")
    assert "status=next" in releases and "The preview yields 3 questions: build a release." in releases
    assert reverse("admin:annotation_dataset_build", args=[ready.pk]) in releases
    assert "status=waiting" in step(html, "evaluations") and "Build a release first" in step(html, "evaluations")


def test_after_a_release_evaluations_come_next(admin_client, ready):
    testset = testset_build(dataset_name="ws", name="ws-v1")
    html = page(admin_client)
    releases = step(html, "releases")
    assert (
        "status=done" in releases
        and "ws-v1" in releases
        and reverse("admin:testsets_testset_change", args=[testset.pk]) in releases
    )
    evaluations = step(html, "evaluations")
    assert "status=next" in evaluations and "No evaluation yet" in evaluations
    assert reverse("admin:evaluation_evaluation_add") + f"?testset={testset.pk}" in evaluations


def test_an_evaluation_is_listed_with_its_accuracy_and_job(admin_client, ready):
    testset = testset_build(dataset_name="ws", name="ws-v1")
    job = Job.objects.create(kind="evaluate", params={"evaluation_id": 0})
    Evaluation.objects.create(
        testset=testset, system=SystemFactory(), status=EvaluationStatus.SUCCEEDED, summary={"accuracy": 0.5}, job=job
    )
    evaluations = step(page(admin_client), "evaluations")
    assert "status=done" in evaluations and "0.500" in evaluations
    assert reverse("job-detail", args=[job.pk]) in evaluations


def test_optional_tools_say_so_and_count_what_they_made(admin_client, db):
    dataset, _ = imported(2)
    html = page(admin_client)
    assert "status=optional" in step(html, "negatives") and "status=optional" in step(html, "pairs")
    pair_set = PairSetFactory(name="okano", dataset=dataset)
    PairFactory.create_batch(2, pair_set=pair_set)
    PairFactory(pair_set=pair_set, review="pending")
    pairs = step(page(admin_client), "pairs")
    assert "status=done" in pairs and "1 pair waits for review." in pairs
    assert reverse("pairs-review", args=["okano"]) in pairs


def test_the_jobs_are_this_datasets_only_and_each_step_links_its_latest(admin_client, db):
    dataset, _ = imported(1)
    DatasetFactory(name="other")
    mine = job_create(params=BuildPoolsParams(dataset="ws", repository="films"))
    theirs = job_create(params=BuildPoolsParams(dataset="other", repository="films"))
    refresh = job_create(params=QualityRefreshParams(dataset_id=dataset.pk))
    build = job_create(params=BuildTestsetParams(dataset="ws", name="v1"))
    html = page(admin_client)
    panel = html[html.index('id="jobs"') :]
    links = set(re.findall(r'href="/jobs/(\d+)/"', panel))
    assert links == {str(mine.pk), str(refresh.pk), str(build.pk)} and str(theirs.pk) not in links
    assert reverse("job-detail", args=[mine.pk]) in step(html, "pools")
    assert reverse("job-detail", args=[refresh.pk]) in step(html, "preview")
    assert reverse("job-detail", args=[build.pk]) in step(html, "releases")
    newer = job_create(params=ImportDialoguesParams(path="x", format="jsonl", dataset="ws"))
    assert reverse("job-detail", args=[newer.pk]) in step(page(admin_client), "import")


def test_actions_are_shown_only_to_accounts_allowed_to_take_them(client, db):
    dataset, questions = imported(2)
    pooled(dataset, questions)
    client.force_login(staff_with("annotation.view_dataset"))
    html = page(client)
    assert reverse("dashboard-open", args=["ws"]) not in html and "Build candidate pools" not in html
    assert "status=next" in step(html, "open")  # the state is shown all the same


def test_a_rating_dataset_has_only_the_annotation_steps(admin_client, db):
    dataset = DatasetFactory(name="ws", task="rate")
    assert [s.key for s in workspace_steps(dataset=dataset)] == ["open", "annotated"]
    html = page(admin_client)
    assert 'id="step-import"' not in html and 'id="step-annotated"' in html


def test_the_steps_come_in_pipeline_order_from_every_app(db):
    keys = [s.key for s in workspace_steps(dataset=DatasetFactory())]
    assert keys == [
        "import",
        "pools",
        "negatives",
        "pairs",
        "shortcuts",
        "open",
        "annotated",
        "preview",
        "releases",
        "evaluations",
        "campaigns",
    ]
    assert StepStatus.NEXT == "next"


def test_the_query_count_does_not_grow_with_questions_or_jobs(admin_client, ready, django_assert_num_queries):
    testset_build(dataset_name="ws", name="ws-v1")
    page(admin_client)  # the session and the site's caches are warm
    with django_assert_num_queries(WORKSPACE_QUERIES):
        page(admin_client)
    more = [QuestionFactory(dataset=ready) for _ in range(20)]
    pooled(ready, more)
    annotation_open(dataset=ready)
    scored(more[:5])
    for _ in range(10):
        job_create(params=BuildPoolsParams(dataset="ws", repository="films"))
        job_create(params=QualityRefreshParams(dataset_id=ready.pk))
    testset_build(dataset_name="ws", name="ws-v2")
    shortcut_audit_run(dataset_name="ws")
    shortcut_audit_run(dataset_name="ws")
    with django_assert_num_queries(WORKSPACE_QUERIES):
        page(admin_client)


# session, user; dataset; questions and candidates by source; pools; negatives; pair sets; the newest
# shortcut audit; units to open; progress (5, the newest score's time among them); snapshot; test sets;
# evaluations (2); the steps' newest jobs (1); members, the accounts that could be added and the sign-up
# links (3; the links' members are one more query once there is a link); campaigns (2); the jobs panel
WORKSPACE_QUERIES = 26


def test_a_rating_datasets_jobs_panel_lists_its_agreement_refreshes(admin_client, db):
    dataset = DatasetFactory(name="ws", task="rate")
    job = job_create(params=QualityRefreshParams(dataset_id=dataset.pk))
    html = page(admin_client)
    assert reverse("job-detail", args=[job.pk]) in html[html.index('id="jobs"') :]


@pytest.mark.parametrize("value", ["x", "²", "9" * 30])
def test_the_evaluation_form_ignores_a_test_set_that_is_no_id(admin_client, db, value):
    response = admin_client.get(reverse("admin:evaluation_evaluation_add"), {"testset": value})
    assert response.status_code == 200 and '<option value="" selected>' in response.content.decode()


def test_the_evaluation_form_takes_the_test_set_from_the_workspace_link(admin_client, ready):
    testset = testset_build(dataset_name="ws", name="ws-v1")
    html = admin_client.get(reverse("admin:evaluation_evaluation_add"), {"testset": testset.pk}).content.decode()
    assert f'<option value="{testset.pk}" selected>' in html
