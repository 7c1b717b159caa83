import json

import pytest
from django.urls import reverse

from annotation.models import CandidateSource, Dataset, FilterRules, Question, Utterance
from core.models import JobStatus
from tests.admin_jobs import post_and_run, upload
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


def test_dialogue_upload_runs_as_a_background_job(admin_client, django_capture_on_commit_callbacks):
    content = json.dumps({"context": ["Hi.", "Hello.", "Lunch?"], "response": "Sure."}) + "\n"
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_dataset_import_dialogues"),
        {"file": upload("d.jsonl", content), "format": "jsonl", "dataset": "up", "context_turns": 3},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.created_by.is_superuser
    assert Question.objects.filter(dataset__name="up").count() == 1


def test_a_bad_upload_shows_the_error_on_the_job_page(admin_client, django_capture_on_commit_callbacks):
    job = post_and_run(
        admin_client,
        reverse("admin:annotation_dataset_import_testset"),
        {"tsv": upload("t.tsv", "a\tb\n"), "dataset": "up", "context_turns": 3},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.FAILED
    page = admin_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "t.tsv, line 1: expected at least 5 tab-separated fields" in page


def test_repository_upload(admin_client, django_capture_on_commit_callbacks):
    job = post_and_run(
        admin_client,
        reverse("admin:retrieval_repository_import"),
        {"file": upload("subs.txt", "One line.\nTwo lines.\n"), "name": "subs", "format": "lines", "min_tokens": 1},
        django_capture_on_commit_callbacks,
    )
    assert job.status == JobStatus.SUCCEEDED and Utterance.objects.count() == 2


@pytest.fixture
def scored_dataset(db, scored_question):
    dataset = DatasetFactory(name="adm")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    scored_question(dataset=dataset, gt=[1, 1, 1, 5, 5], false=[WRONG] * 3)
    return dataset


def test_filter_preview_page_shows_counts_and_agreement(admin_client, scored_dataset):
    page = admin_client.get(reverse("admin:annotation_dataset_preview", args=[scored_dataset.pk])).content.decode()
    assert "dropped: ground truth scored low" in page
    assert "Fleiss" in page
    assert '<th class="num">1 (0 derived)</th>' in page


@pytest.mark.parametrize(
    "name",
    ["core_job"]
    + [f"annotation_{m}" for m in ["dataset", "question", "candidate", "annotator", "score", "filterrules", "context"]],
)
def test_annotation_changelists_render(admin_client, scored_dataset, name):
    assert admin_client.get(reverse(f"admin:{name}_changelist")).status_code == 200


def test_question_change_page_lists_candidates(admin_client, scored_dataset):
    question = Question.objects.first()
    page = admin_client.get(reverse("admin:annotation_question_change", args=[question.pk])).content.decode()
    assert question.ground_truth in page


def test_question_change_page_shows_the_dialogue_each_candidate_once_and_three_digit_scores(admin_client, db):
    question = QuestionFactory(context__turns=["Is the museum open today?", "Only until six."])
    CandidateFactory(question=question, text="The museum is closed on Mondays.", retrieval_score=0.7089802026748657)
    page = admin_client.get(reverse("admin:annotation_question_change", args=[question.pk])).content.decode()
    assert "A: Is the museum open today?" in page and "B: Only until six." in page
    assert page.count("The museum is closed on Mondays.") == 1
    assert "0.709" in page and "0.7089802026748657" not in page
    assert f"{reverse('pool-review', args=[question.dataset.name])}?q={question.pk}" in page


def test_candidate_changelist_shows_three_digit_scores(admin_client, db):
    CandidateFactory(retrieval_score=0.7089802026748657)
    page = admin_client.get(reverse("admin:annotation_candidate_changelist")).content.decode()
    assert "0.709" in page and "0.7089802026748657" not in page


def test_candidate_changelist_names_each_generated_source_apart(admin_client, db):
    CandidateFactory(text="A masked LM made this.", source=CandidateSource.MLM_NEGATIVE)
    CandidateFactory(text="A system said this.", source=CandidateSource.SYSTEM_RESPONSE)
    page = admin_client.get(reverse("admin:annotation_candidate_changelist")).content.decode()
    assert "masked-LM negative (Park et al.)" in page and "a system&#x27;s generated response" in page
    assert "written by hand" not in page and "perturbed ground truth" not in page
    filtered = admin_client.get(reverse("admin:annotation_candidate_changelist"), {"source": "mlm_negative"})
    assert "A masked LM made this." in filtered.content.decode()
    assert "A system said this." not in filtered.content.decode()


def test_new_filter_rules_are_a_new_version(admin_client, db):
    data = {
        "acceptable_min_score": 4,
        "acceptable_min_count": 3,
        "ungrammatical_max_score": 0,
        "ungrammatical_min_count": 3,
        "ground_truth_low_max_score": 3,
        "ground_truth_low_min_count": 3,
        "note": "x",
    }
    response = admin_client.post(reverse("admin:annotation_filterrules_add"), data)
    assert response.status_code == 302
    assert list(FilterRules.objects.order_by("version").values_list("version", "acceptable_min_score")) == [
        (1, 3),
        (2, 4),
    ]


def test_dataset_changelist_query_count_is_constant(admin_client, scored_question, django_assert_max_num_queries):
    for i in range(5):
        scored_question(dataset=DatasetFactory(name=f"d{i}"), gt=GOOD_GT, false=[WRONG])
    with django_assert_max_num_queries(8):
        assert admin_client.get(reverse("admin:annotation_dataset_changelist")).status_code == 200
    assert Dataset.objects.count() == 5


def test_filter_preview_page_explains_derived_questions(admin_client, scored_dataset):
    page = admin_client.get(reverse("admin:annotation_dataset_preview", args=[scored_dataset.pk])).content.decode()
    assert 'id="derived-help"' in page and "The total includes the derived questions" in page
    assert "at least 6 false candidates" in page
