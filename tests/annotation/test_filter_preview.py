import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotator
from annotation.selectors import candidate_decisions, filter_preview, filter_rules_current, question_pools
from annotation.services.filter_rules import filter_rules_create
from tests.factories import DatasetFactory

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
ACCEPTABLE = [4, 4, 5, 1, 2]
UNGRAMMATICAL = [0, 0, 0, 1, 1]


@pytest.fixture
def dataset(db):
    return DatasetFactory(name="preview")


def test_preview_counts_what_each_rule_removes(dataset, scored_question):
    # given one clean question, one with a low-scored ground truth, and one with too few false candidates left
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, WRONG, WRONG, ACCEPTABLE, UNGRAMMATICAL])
    scored_question(dataset=dataset, gt=[3, 2, 3, 5, 5], false=[WRONG, WRONG, WRONG])
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, ACCEPTABLE, ACCEPTABLE])
    # when previewed with the default rules
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    # then
    assert preview.questions == 3
    assert preview.questions_by_ground_truth == {"passed": 2, "rejected": 1, "undecided": 0}
    assert preview.candidates_by_decision == {"kept": 7, "acceptable": 3, "ungrammatical": 1, "undecided": 0}
    assert preview.questions_too_few_false == 1
    assert preview.buildable_questions == 1


def test_preview_counts_derived_questions(dataset, scored_question):
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 6 + [ACCEPTABLE])
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    assert (preview.buildable_questions, preview.buildable_derived_questions) == (2, 1)


def test_acceptable_candidate_failing_the_ground_truth_rule_is_not_used_as_ground_truth(dataset, scored_question):
    # given an "acceptable" candidate that >= 3 annotators also scored <= 3
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 6 + [[3, 3, 3, 1, 1]])
    pools = question_pools(dataset=dataset, rules=filter_rules_current())
    assert list(pools.values())[0].acceptable_as_ground_truth == []


def test_scores_of_excluded_annotators_do_not_count(dataset, scored_question):
    # given a candidate that is acceptable only because of one annotator's vote
    annotators = [Annotator.objects.create(provider="imported", external_id=f"x{i}") for i in range(5)]
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, WRONG, WRONG, [3, 3, 3, 1, 1]], annotators=annotators)
    assert filter_preview(dataset=dataset, rules=filter_rules_current()).candidates_by_decision["acceptable"] == 1
    # when that annotator's scores are excluded (the planned 5 still apply)
    Annotator.objects.filter(pk=annotators[0].pk).update(scores_excluded=True)
    # then the candidate is no longer acceptable and one vote could still change that
    decisions = filter_preview(dataset=dataset, rules=filter_rules_current()).candidates_by_decision
    assert decisions["acceptable"] == 0 and decisions["undecided"] == 1


def test_a_newer_rules_version_changes_the_outcome(dataset, scored_question):
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, WRONG, WRONG, [3, 3, 1, 1, 1]])
    lenient = filter_rules_current()
    strict = filter_rules_create(
        acceptable_min_score=3,
        acceptable_min_count=2,
        ungrammatical_max_score=0,
        ungrammatical_min_count=3,
        ground_truth_low_max_score=3,
        ground_truth_low_min_count=3,
    )
    assert strict.version == lenient.version + 1
    assert filter_preview(dataset=dataset, rules=lenient).candidates_by_decision["acceptable"] == 0
    assert filter_preview(dataset=dataset, rules=strict).candidates_by_decision["acceptable"] == 1


def test_preview_query_count_does_not_grow_with_scores(dataset, scored_question):
    # given a dataset with 2 scored questions, then with 12 (330 scores)
    rules = filter_rules_current()
    counts = []
    for n in (2, 10):
        for _ in range(n):
            scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 4)
        with CaptureQueriesContext(connection) as queries:
            filter_preview(dataset=dataset, rules=rules)
        counts.append(len(queries))
    # then the decisions come from one aggregate of the scores into a temporary table (created,
    # filled, analyzed where the engine keeps statistics, read, dropped): the same few queries,
    # not a query per candidate or score
    assert counts[0] == counts[1] <= 6


def test_unscored_candidates_are_undecided(dataset, scored_question):
    scored_question(dataset=dataset, gt=[], false=[[], []])
    preview = filter_preview(dataset=dataset, rules=filter_rules_current())
    assert preview.questions_by_ground_truth["undecided"] == 1
    assert preview.candidates_by_decision["undecided"] == 2


def test_each_candidate_gets_the_decision_the_preview_counts(dataset, scored_question, django_assert_num_queries):
    # given the questions of the first test
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, WRONG, WRONG, ACCEPTABLE, UNGRAMMATICAL])
    scored_question(dataset=dataset, gt=[3, 2, 3, 5, 5], false=[WRONG, WRONG, WRONG])
    rules = filter_rules_current()
    # when each candidate's decision is read (one query)
    with django_assert_num_queries(1):
        decisions = candidate_decisions(dataset=dataset, rules=rules)
    # then they are the preview's, one per response, ground truths apart
    ground_truths = [d.decision for d in decisions if d.is_ground_truth]
    false = [d.decision for d in decisions if not d.is_ground_truth]
    assert ground_truths == ["passed", "rejected"]
    assert {d: false.count(d) for d in set(false)} == {
        d: n for d, n in filter_preview(dataset=dataset, rules=rules).candidates_by_decision.items() if n
    }
    assert all(d.scores == 5 and d.source == "lexical" for d in decisions if not d.is_ground_truth)
