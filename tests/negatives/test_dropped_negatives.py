"""A negative the masked LM makes but that is not added says why: the summary, the report and the
workspace count each reason, so that "58 generated, 49 added" adds up."""

import pytest
from django.urls import reverse

from annotation.models import Candidate, CandidateSource, Turn
from core.job_registry import job_kind_get
from core.text import text_hash
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import Manipulation, ManipulationSettings, Manipulator, Negative, WordScore
from negatives.models import QuestionGeneration
from negatives.services.generation import negatives_generate
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory

pytestmark = pytest.mark.django_db
TRUTH = "The train leaves at nine."


@pytest.fixture
def question():
    dataset = DatasetFactory(name="drops")
    question = QuestionFactory(dataset=dataset, ground_truth=TRUTH)
    Turn.objects.filter(context=question.context).update(text="Hello there .", text_hash=text_hash("Hello there ."))
    CandidateFactory(question=question, text="A pool candidate.", source=CandidateSource.LEXICAL)
    return question


def made(*texts: str) -> Manipulation:
    word = WordScore(index=0, text="train", score=1.0, logp_context=0.0, logp_alone=-1.0)
    negatives = [Negative(text=t, sample=n, replacements=[]) for n, t in enumerate(texts)]
    return Manipulation(outcome="generated", words=[word], selected=[0], negatives=negatives)


def test_each_negative_not_added_is_counted_by_why(question, tiny_mlm_dir, monkeypatch):
    # given a model that makes one new negative and five that would repeat a text
    texts = [
        "The bus leaves at nine.",  # new: added
        "the train leaves at nine.",  # the ground truth (texts compare normalised)
        "Hello there.",  # a context turn
        "The bus leaves at nine.",  # the same as another negative of this response
        "A pool candidate.",  # a candidate the question has
        "A pool candidate.",  # again: counted once as repeated
    ]
    monkeypatch.setattr(Manipulator, "manipulate", lambda self, items: [made(*texts) for _ in items])
    report = negatives_generate(
        dataset_name="drops", mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings(threshold=-1e9)
    )
    # then one is added and every other one has its reason
    assert report["candidates_added"] == 1
    assert {
        r: report[r] for r in ("dropped_ground_truth", "dropped_context", "dropped_repeated", "dropped_existing")
    } == {
        "dropped_ground_truth": 1,
        "dropped_context": 1,
        "dropped_repeated": 2,
        "dropped_existing": 1,
    }
    row = QuestionGeneration.objects.get()
    assert (row.negatives_added, row.dropped_existing, row.dropped_repeated) == (1, 1, 2)
    assert Candidate.objects.filter(source=CandidateSource.MLM_NEGATIVE).count() == 1
    # and the job's summary says where they went
    summary = job_kind_get(GenerateNegativesParams.kind).params(dataset="drops").summary(report)
    assert "1 candidates added (5 not added: 1 the same as a candidate the question has" in summary
    assert "1 the same as the ground truth; 1 the same as a context turn; 2 the same as another negative" in summary


def test_the_workspace_counts_the_negatives_not_added(question, tiny_mlm_dir, monkeypatch, admin_client):
    monkeypatch.setattr(Manipulator, "manipulate", lambda self, items: [made(TRUTH, "New one.") for _ in items])
    negatives_generate(dataset_name="drops", mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings())
    page = admin_client.get(reverse("dashboard-dataset", args=["drops"])).content.decode()
    step = page.split('id="step-negatives"')[1].split("</section>")[0]
    assert "not added: the same as the ground truth" in step


def test_a_question_whose_negatives_were_all_dropped_received_none(question, tiny_mlm_dir, monkeypatch):
    # given a response whose only negative is its ground truth again
    monkeypatch.setattr(Manipulator, "manipulate", lambda self, items: [made(TRUTH) for _ in items])
    report = negatives_generate(dataset_name="drops", mlm_path=str(tiny_mlm_dir), settings=ManipulationSettings())
    # then it had a selected word, but received no negative: the share says so
    assert (report["generated"], report["questions_with_negative"]) == (1, 0)
    assert (report["share_with_selected_word"], report["share_with_negative"]) == (1.0, 0.0)
    summary = job_kind_get(GenerateNegativesParams.kind).params(dataset="drops").summary(report)
    assert summary.startswith("Negatives for 0 of 1 questions of dataset drops: 0 candidates added")
    assert "questions without a negative: 1 its negatives were the ground truth again" in summary
