import json

import pytest

from annotation.models import Annotator, Candidate, Question, Score
from core.errors import ImportFileError, UserError
from testsets.services.import_tsv import testset_import

TSV = (
    "Hi.\tHello.\tCoffee?\tYes, please.\tThe bus is late.\tI never drink tea.\tTomorrow.\n"
    "Ready?\tAlmost.\tHurry up.\tComing!\tThe shop was closed.\tHe went home.\tIt rained.\n"
)
SCORES = [
    [[5, 5, 4, 5, 5], [1, 1, 2, 1, 1], [2, 1, 1, 1, 3], [0, 1, 1, 1, 1]],
    [[4, 5, 5, 5, 3], [1, 2, 1, 1, 1], [1, 1, 1, 1, 1], [2, 2, 1, 3, 1]],
]


def scores_text(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_questions_candidates_and_scores_are_imported(db, write_file):
    # given the released format and its aligned human scores
    tsv, scores = write_file("t.tsv", TSV), write_file("s.jsonl", scores_text(SCORES))
    # when imported
    report = testset_import(tsv_path=tsv, scores_path=scores, dataset_name="sato")
    # then every line is a question with 1 ground truth + 3 false candidates and 5 scores each
    assert (report["questions"], report["candidates"], report["scores"]) == (2, 8, 40)
    question = Question.objects.order_by("id").first()
    assert question.ground_truth == "Yes, please."
    assert list(question.candidates.order_by("id").values_list("text", "is_ground_truth")) == [
        ("Yes, please.", True),
        ("The bus is late.", False),
        ("I never drink tea.", False),
        ("Tomorrow.", False),
    ]


def test_scores_belong_to_placeholder_annotators_one_to_five(db, write_file):
    testset_import(
        tsv_path=write_file("t.tsv", TSV), scores_path=write_file("s.jsonl", scores_text(SCORES)), dataset_name="sato"
    )
    annotators = list(
        Annotator.objects.filter(provider="imported").order_by("id").values_list("external_id", flat=True)
    )
    assert annotators == [f"sato#{i}" for i in range(1, 6)]
    first_false = Candidate.objects.filter(is_ground_truth=False).order_by("id").first()
    values = list(Score.objects.filter(candidate=first_false).order_by("annotator_id").values_list("value", flat=True))
    assert values == [1, 1, 2, 1, 1]


def test_without_scores_only_texts_are_imported(db, write_file):
    report = testset_import(tsv_path=write_file("t.tsv", TSV), dataset_name="sato")
    assert report["scores"] == 0 and Candidate.objects.count() == 8 and not Score.objects.exists()


@pytest.mark.parametrize(
    ("tsv", "message"),
    [
        ("a\tb\tc\td\n", "line 1: expected at least 5 tab-separated fields"),
        (TSV + "a\tb\tc\td\te\tf\n", "line 3: expected 7 tab-separated fields as on line 1, found 6"),
        ("a\t\tc\td\te\tf\tg\n", "line 1, field context 2: is empty"),
        ("a\tb\tc\tSame thing!\tsame thing\tf\tg\n", "line 1, field candidate 1: is the same text as ground_truth"),
    ],
)
def test_malformed_tsv_is_rejected_naming_line_and_field(db, write_file, tsv, message):
    with pytest.raises(ImportFileError) as error:
        testset_import(tsv_path=write_file("t.tsv", tsv), dataset_name="sato")
    assert message in str(error.value)
    assert not Question.objects.exists()


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [SCORES[0], [[4, 5, 5, 5, 6], *SCORES[1][1:]]],
            "line 2, field ground truth scores, annotator 5: score 6 is not an integer from 0 to 5",
        ),
        ([SCORES[0], [[4, 5, 5, 5, -1], *SCORES[1][1:]]], "annotator 5: score -1"),
        ([SCORES[0], [[4, 5, 5, 5, "5"], *SCORES[1][1:]]], "score '5' is not an integer"),
        (
            [SCORES[0], [SCORES[1][0], [1, 2, 1, 1], *SCORES[1][2:]]],
            "line 2, field candidate 1 scores: has 4 scores; every list must have 5 (ragged score lists)",
        ),
        ([SCORES[0], SCORES[1][:3]], "line 2: expected a list of 4 score lists"),
        ([SCORES[0]], "has fewer lines than the test set"),
        ([*SCORES, SCORES[0]], "line 3: has more lines than t.tsv"),
    ],
)
def test_bad_scores_are_rejected_and_nothing_is_imported(db, write_file, rows, message):
    # given a TSV and a scores file with one defect
    tsv, scores = write_file("t.tsv", TSV), write_file("s.jsonl", scores_text(rows))
    # when imported
    with pytest.raises(ImportFileError) as error:
        testset_import(tsv_path=tsv, scores_path=scores, dataset_name="sato")
    # then the error locates it and the whole import was rolled back
    assert message in str(error.value)
    assert not Question.objects.exists() and not Score.objects.exists() and not Annotator.objects.exists()


def test_crlf_bom_and_trailing_newline_variants_are_accepted(db, write_file):
    tsv = write_file("t.tsv", b"\xef\xbb\xbf" + TSV.replace("\n", "\r\n").encode().rstrip(b"\r\n"))
    report = testset_import(tsv_path=tsv, dataset_name="sato")
    assert report["questions"] == 2
    assert Question.objects.order_by("id").first().context.turns.first().text == "Hi."


def test_empty_file_is_an_error(db, write_file):
    with pytest.raises(UserError, match="no questions found"):
        testset_import(tsv_path=write_file("t.tsv", ""), dataset_name="sato")
