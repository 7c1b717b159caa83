"""Per candidate source, the share of annotated false candidates the annotators found acceptable or
ungrammatical (annotation.selectors_dataset.candidate_verdicts_by_source): counted in the database, it
matches the candidates and scores there, and the workspace and the test set's card show it."""

import random
import re

import pytest

from annotation.models import Candidate, CandidateSource, Score
from annotation.rules import ScoreCounts, decide_false_candidate
from annotation.selectors import filter_rules_current
from annotation.selectors_dataset import candidate_verdicts_by_source
from annotation.services.quality import quality_refresh
from tests.annotation.test_workspace import page, step
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory, ScoreFactory


def expected(dataset, rules) -> dict[str, dict]:
    """The same figures read row by row from the database and decided by the filter rules' own
    function: the independent count the selector's SQL must agree with."""
    out: dict[str, dict] = {}
    candidates = Candidate.objects.filter(
        question__dataset=dataset, question__derived_from__isnull=True, is_ground_truth=False
    )
    for candidate in candidates:
        values = [
            s.value for s in Score.objects.filter(candidate=candidate, counted=True, annotator__scores_excluded=False)
        ]
        if not values:
            continue
        counts = ScoreCounts(
            scores=len(values),
            acceptable=sum(v >= rules.acceptable_min_score for v in values),
            ungrammatical=sum(v <= rules.ungrammatical_max_score for v in values),
            low=0,
        )
        decision = decide_false_candidate(counts, rules, planned=dataset.annotators_per_item)
        row = out.setdefault(candidate.source, {"annotated": 0, "acceptable": 0, "ungrammatical": 0, "complete": 0})
        row["annotated"] += 1
        row["acceptable"] += decision == "acceptable"
        row["ungrammatical"] += decision == "ungrammatical"
        row["complete"] += decision != "undecided"
    return out


@pytest.fixture
def mixed(db):
    """Questions whose candidates of three sources get random scores from five annotators, some
    not counted (unconfirmed, or of an excluded annotator), some candidates unscored or half scored."""
    rng = random.Random(7)
    dataset = DatasetFactory(name="mix", annotators_per_item=5)
    annotators = AnnotatorFactory.create_batch(5)
    excluded = AnnotatorFactory(scores_excluded=True)
    sources = [CandidateSource.LEXICAL, CandidateSource.DENSE, CandidateSource.MLM_NEGATIVE]
    for q in range(12):
        question = QuestionFactory(dataset=dataset)
        truth = question.candidates.get(is_ground_truth=True)
        for annotator in annotators:
            ScoreFactory(candidate=truth, annotator=annotator, value=5)
        for i in range(6):
            candidate = CandidateFactory(question=question, source=sources[i % 3], text=f"c {q}-{i}")
            scorers = annotators[: rng.choice([0, 2, 5, 5, 5])]
            for annotator in scorers:
                ScoreFactory(
                    candidate=candidate,
                    annotator=annotator,
                    value=rng.choice([0, 0, 1, 3, 4]),
                    counted=rng.random() > 0.1,
                )
            ScoreFactory(candidate=candidate, annotator=excluded, value=0)
    # another dataset's candidates never count
    other = CandidateFactory(question=QuestionFactory(), source=CandidateSource.LEXICAL)
    for annotator in annotators:
        ScoreFactory(candidate=other, annotator=annotator, value=4)
    return dataset


def test_the_counts_match_the_candidates_and_scores_in_the_database(mixed):
    rules = filter_rules_current()
    rows = candidate_verdicts_by_source(dataset=mixed, rules=rules)
    got = {r["source"]: {k: r[k] for k in ("annotated", "acceptable", "ungrammatical", "complete")} for r in rows}
    assert got == expected(mixed, rules)
    assert set(got) == {"lexical", "dense", "mlm_negative"}


def test_shares_are_of_the_annotated_candidates_and_name_the_source(db):
    rules = filter_rules_current()
    dataset = DatasetFactory(name="shares")
    annotators = AnnotatorFactory.create_batch(5)
    question = QuestionFactory(dataset=dataset)
    for text, values in (("fits", [4, 4, 3, 1, 1]), ("broken", [0, 0, 0, 2, 2]), ("wrong", [1, 1, 2, 1, 1])):
        candidate = CandidateFactory(question=question, text=text, source=CandidateSource.MLM_NEGATIVE)
        for annotator, value in zip(annotators, values, strict=True):
            ScoreFactory(candidate=candidate, annotator=annotator, value=value)
    CandidateFactory(question=question, text="not scored yet", source=CandidateSource.MLM_NEGATIVE)
    [row] = candidate_verdicts_by_source(dataset=dataset, rules=rules)
    assert row["label"] == CandidateSource.MLM_NEGATIVE.label
    assert (row["annotated"], row["acceptable"], row["ungrammatical"]) == (3, 1, 1)
    assert row["share_acceptable"] == row["share_ungrammatical"] == pytest.approx(1 / 3)


def test_one_query_whatever_the_number_of_candidates(mixed, django_assert_num_queries):
    rules = filter_rules_current()
    with django_assert_num_queries(1):
        candidate_verdicts_by_source(dataset=mixed, rules=rules)


def test_the_workspace_shows_each_sources_shares_with_n(admin_client, mixed):
    quality_refresh(dataset=mixed)
    rules = filter_rules_current()
    preview = step(page(admin_client, "mix"), "preview")
    for row in candidate_verdicts_by_source(dataset=mixed, rules=rules):
        cells = re.search(rf'<tr data-source="{row["source"]}">(.*?)</tr>', preview, re.S).group(1)
        assert f"<td>{row['annotated']}</td>" in cells
        assert f'{row["share_acceptable"] * 100:.1f} % <span class="muted">({row["acceptable"]})</span>' in cells
        assert f'{row["share_ungrammatical"] * 100:.1f} % <span class="muted">({row["ungrammatical"]})</span>' in cells


def test_a_snapshot_from_before_shows_no_table(admin_client, mixed):
    snapshot = quality_refresh(dataset=mixed)
    del snapshot.data["verdicts_by_source"]
    snapshot.save()
    assert "verdicts-by-source" not in step(page(admin_client, "mix"), "preview")
