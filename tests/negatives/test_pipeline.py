"""Generated negatives through the whole pipeline: scored by annotators with the rest, kept in a
test set only when humans judged them false, and reported apart by an evaluation."""

import pytest

from annotation.models import Candidate, CandidateSource, DatasetMembership
from annotation.services.assignment import annotation_open, unit_next
from annotation.services.submission import Answer, unit_submit
from core.services.jobs import job_execute
from evaluation.scoring.loading import scorer_cache_clear
from evaluation.services.evaluations import evaluation_start
from evaluation.services.systems import system_register
from negatives.manipulation import ManipulationSettings
from negatives.services.generation import negatives_generate
from tests.evaluation.plugins import ScriptedPlugin
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory
from testsets.models import TestSetCandidate
from testsets.services.build import testset_build

pytestmark = pytest.mark.django_db

GROUND_TRUTHS = [
    "Sure, I will try again after dinner.",
    "Sure, it is forty dollars, but it is on sale today.",
    "Sure, the train leaves at nine o'clock from platform two.",
]


@pytest.fixture
def scripted():
    ScriptedPlugin.reset()
    yield system_register(name="scripted", kind="plugin", plugin="tests.evaluation.plugins.ScriptedPlugin")
    ScriptedPlugin.reset()
    scorer_cache_clear()


def human_score(candidate: Candidate, acceptable_negatives: set[int]) -> int:
    if candidate.is_ground_truth:
        return 5
    return 4 if candidate.pk in acceptable_negatives else 1


def test_negatives_humans_find_acceptable_are_dropped_and_the_rest_are_evaluated_apart(tiny_mlm_dir, scripted):
    # given a dataset whose questions have two retrieved candidates each
    dataset = DatasetFactory(name="pipeline", adaptive_stopping=False, attention_check_rate=0)
    for text in GROUND_TRUTHS:
        question = QuestionFactory(dataset=dataset, ground_truth=text)
        CandidateFactory.create_batch(2, question=question)
    # when two negatives per ground truth are generated
    negatives_generate(
        dataset_name=dataset.name,
        mlm_path=str(tiny_mlm_dir),
        settings=ManipulationSettings(threshold=-1e9, per_question=2),
    )
    generated = Candidate.objects.filter(question__dataset=dataset, source=CandidateSource.MLM_NEGATIVE)
    assert generated.count() == 6
    # and five annotators score every unit: each question's second negative is still a good answer
    acceptable = set(generated.filter(rank=2).values_list("pk", flat=True))
    annotation_open(dataset=dataset)
    for annotator in AnnotatorFactory.create_batch(5):
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
        while (unit := unit_next(annotator=annotator, dataset=dataset)) is not None:
            shown = Candidate.objects.in_bulk([item["candidate_id"] for item in unit.items])
            answers = {
                item["key"]: Answer(value=human_score(shown[item["candidate_id"]], acceptable)) for item in unit.items
            }
            unit_submit(assignment_id=unit.pk, annotator=annotator, answers=answers)
    # then every negative was scored by all five, like the retrieved candidates
    assert [c.scores.count() for c in generated] == [5] * 6
    # and the test set keeps the negatives judged false, never one judged acceptable
    testset = testset_build(dataset_name=dataset.name, name="pipeline-1", false_per_question=3, seed=0)
    kept = TestSetCandidate.objects.filter(item__testset=testset, is_ground_truth=False)
    kept_negatives = set(
        kept.filter(candidate__source=CandidateSource.MLM_NEGATIVE).values_list("candidate", flat=True)
    )
    assert kept_negatives == set(generated.filter(rank=1).values_list("pk", flat=True))
    assert kept.count() == 9
    # and an evaluation reports the accuracy against generated negatives apart from retrieved ones
    evaluation, job = evaluation_start(testset_name=testset.name, system_name="scripted", enqueue=False)
    job_execute(job_id=job.pk)
    evaluation.refresh_from_db()
    per_source = evaluation.summary["per_source"]
    assert per_source["mlm_negative"]["false_candidates"] == 3
    assert per_source["lexical"]["false_candidates"] == 6
    # (the scripted system prefers every "Sure ..." ground truth to any other text)
    assert per_source["mlm_negative"]["accuracy"] == per_source["lexical"]["accuracy"] == 1.0
