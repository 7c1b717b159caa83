import pytest

from annotation.models import Annotator, QuestionWork, Score
from annotation.services.assignment import annotation_open
from annotation.services.score_import import scores_import
from core.errors import ImportFileError, UserError
from tests.factories import CandidateFactory, DatasetFactory, QuestionFactory, ScoreFactory, UserFactory


@pytest.fixture
def candidates(db):
    first = CandidateFactory()
    second = CandidateFactory(question=first.question)
    return first, second


def csv_for(rows) -> str:
    return "question_id,candidate_id,annotator,score\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def test_scores_are_created_for_crowd_and_imported_annotators(candidates, write_file):
    # given rows for an MTurk worker and a bare annotator id
    a, b = candidates
    path = write_file("s.csv", csv_for([(a.question_id, a.pk, "mturk:A1B2", 4), (b.question_id, b.pk, "rater7", 0)]))
    # when imported
    report = scores_import(path=path)
    # then two scores exist, with the annotators created under their providers
    assert report["created"] == 2
    providers = [
        Score.objects.get(candidate=a).annotator.provider,
        Annotator.objects.get(external_id="rater7").provider,
    ]
    assert providers == ["mturk", "imported"]


def test_reimporting_the_same_file_changes_nothing(candidates, write_file):
    a, _ = candidates
    path = write_file("s.csv", csv_for([(a.question_id, a.pk, "r1", 3)]))
    scores_import(path=path)
    report = scores_import(path=path)
    assert (report["created"], report["unchanged"]) == (0, 1)
    assert Score.objects.count() == 1


def test_a_different_value_for_an_existing_score_is_refused(candidates, write_file):
    a, _ = candidates
    scores_import(path=write_file("s.csv", csv_for([(a.question_id, a.pk, "r1", 3)])))
    with pytest.raises(ImportFileError, match="line 2, field score: imported:r1 already gave candidate .* a 3"):
        scores_import(path=write_file("t.csv", csv_for([(a.question_id, a.pk, "r1", 5)])))
    assert Score.objects.get().value == 3


def test_columns_may_come_in_any_order(candidates, write_file):
    a, _ = candidates
    path = write_file("s.csv", f"score,annotator,candidate_id,question_id\n2,r1,{a.pk},{a.question_id}\n")
    assert scores_import(path=path)["created"] == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (lambda a: (a.question_id, a.pk, "r1", 6), "field score: 6 is outside 0-5"),
        (lambda a: (a.question_id, a.pk, "r1", "x"), "field score: 'x' is not an integer"),
        (lambda a: (a.question_id, 999999, "r1", 1), "field candidate_id: no candidate 999999"),
        (lambda a: (a.question_id + 1000, a.pk, "r1", 1), "field question_id: candidate"),
        (lambda a: (a.question_id, a.pk, "", 1), "field annotator: is empty"),
        (lambda a: (a.question_id, a.pk, "internal:nobody", 1), "no internal annotator 'internal:nobody'"),
    ],
)
def test_bad_rows_are_rejected_and_nothing_is_imported(candidates, write_file, row, message):
    a, b = candidates
    path = write_file("s.csv", csv_for([(b.question_id, b.pk, "ok", 1), row(a)]))
    with pytest.raises(ImportFileError) as error:
        scores_import(path=path)
    assert "s.csv, line 3" in str(error.value) and message in str(error.value)
    assert not Score.objects.exists()


def test_the_same_pair_twice_in_one_file_is_an_error(candidates, write_file):
    a, _ = candidates
    path = write_file("s.csv", csv_for([(a.question_id, a.pk, "r1", 1), (a.question_id, a.pk, "r1", 1)]))
    with pytest.raises(ImportFileError, match="line 3, field annotator: 'r1' scores candidate .* a second time"):
        scores_import(path=path)


def test_missing_header_column_is_reported(db, write_file):
    with pytest.raises(ImportFileError, match="line 1: header lacks column\\(s\\) score"):
        scores_import(path=write_file("s.csv", "question_id,candidate_id,annotator\n1,2,x\n"))


def test_empty_file_is_an_error(db, write_file):
    with pytest.raises(UserError, match="empty file"):
        scores_import(path=write_file("s.csv", ""))


def test_internal_annotators_are_resolved_not_created(candidates, write_file):
    # given an internal annotator with an account
    a, _ = candidates
    existing = ScoreFactory().annotator
    user = UserFactory(username="alice")
    Annotator.objects.create(provider="internal", external_id="alice", user=user)
    # when a row names it
    scores_import(path=write_file("s.csv", csv_for([(a.question_id, a.pk, "internal:alice", 4)])))
    # then the score is theirs
    assert Score.objects.get(candidate=a).annotator.user == user
    assert existing.pk != Score.objects.get(candidate=a).annotator.pk


def test_a_row_with_more_fields_than_the_header_is_refused(candidates, write_file):
    a, b = candidates
    path = write_file("s.csv", csv_for([(a.question_id, a.pk, "r1", 4)]) + f"{b.question_id},{b.pk},r1,4,5\n")
    with pytest.raises(
        ImportFileError, match="s.csv, line 3: expected 4 comma-separated fields as in the header, found 5"
    ):
        scores_import(path=path)
    assert not Score.objects.exists()


def test_a_header_without_rows_is_an_error(db, write_file):
    with pytest.raises(UserError, match="s.csv: the header is not followed by any score"):
        scores_import(path=write_file("s.csv", csv_for([])))


def test_an_id_beyond_64_bits_is_an_error_on_every_database(candidates, write_file):
    a, _ = candidates
    path = write_file("s.csv", csv_for([(a.question_id, 2**64, "r1", 4)]))
    with pytest.raises(ImportFileError, match="line 2, field candidate_id: 18446744073709551616 is not an id"):
        scores_import(path=path)


def test_a_nul_in_an_annotator_id_is_an_error_naming_the_column(candidates, write_file):
    a, _ = candidates
    with pytest.raises(ImportFileError, match=r"line 2, field annotator: holds a NUL character"):
        scores_import(path=write_file("s.csv", csv_for([(a.question_id, a.pk, "r\x001", 4)])))
    assert not Annotator.objects.filter(external_id__startswith="r").exists()


def test_imported_scores_that_decide_an_opened_unit_close_it(db, write_file):
    # given a question opened for annotation: its ground truth and one false candidate, unscored
    question = QuestionFactory(dataset=DatasetFactory(name="opened"))
    false = CandidateFactory(question=question)
    annotation_open(dataset=question.dataset)
    assert QuestionWork.objects.get(question=question).is_open
    # when five raters' scores that decide both responses are imported
    rows = [
        (question.pk, c.pk, f"rater{i}", value)
        for c, value in ((question_gt(question), 5), (false, 1))
        for i in range(5)
    ]
    report = scores_import(path=write_file("s.csv", csv_for(rows)))
    # then the unit is closed, as five submissions would have closed it
    assert report["units_closed"] == 1
    assert not QuestionWork.objects.get(question=question).is_open


def question_gt(question):
    return question.candidates.get(is_ground_truth=True)
