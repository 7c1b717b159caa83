"""Pair sets as JSON lines: an export imports back the same; a bad line names file, line and
field, and nothing is imported."""

import io
import json

import pytest
from django.core.management import call_command

from core.errors import ImportFileError, UserError
from pairs.models import Pair, PairSet, Review
from pairs.services.transfer import pairs_export, pairs_import

pytestmark = pytest.mark.django_db

CONTEXT = ["Where is the station?", "Two blocks north.", "Is it far from the bank?"]
GOOD = {
    "context": CONTEXT,
    "correct": "It is next to the bank.",
    "incorrect": "It is far from the bank.",
    "type": "content",
}


def lines(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def test_export_then_import_gives_the_same_pairs(built_set, write_file):
    pair = built_set.pairs.first()
    pair.review = Review.ACCEPTED
    pair.save()
    out = io.StringIO()
    assert pairs_export(pair_set=built_set, out=out) == 5
    report = pairs_import(set_name="copy", path=write_file("pairs.jsonl", out.getvalue()))
    assert (report["pairs"], report["reviewed"], report["accepted"]) == (5, 1, 1)
    fields = ("context", "correct", "incorrect", "type", "subtype", "criterion", "review")
    fields += ("correct_start", "correct_end", "incorrect_start", "incorrect_end")
    original = sorted(built_set.pairs.values_list(*fields))
    copy = sorted(PairSet.objects.get(name="copy").pairs.values_list(*fields))
    assert copy == original


def test_export_of_accepted_pairs_only(built_set):
    built_set.pairs.filter(pk=built_set.pairs.first().pk).update(review=Review.ACCEPTED)
    out = io.StringIO()
    assert pairs_export(pair_set=built_set, out=out, accepted_only=True) == 1
    assert json.loads(out.getvalue())["review"] == "accepted"


def test_a_hand_made_pair_without_spans_gets_the_changed_words(write_file):
    pairs_import(set_name="hand", path=write_file("hand.jsonl", lines(GOOD)))
    pair = Pair.objects.get()
    assert pair.correct[pair.correct_start : pair.correct_end] == "next to"
    assert pair.incorrect[pair.incorrect_start : pair.incorrect_end] == "far from"
    assert pair.review == Review.ACCEPTED and pair.source_line == 1
    assert pair.provenance == {"method": "imported", "file": "hand.jsonl", "line": 1}


def test_the_command_imports_and_exports(write_file, tmp_path, capsys):
    call_command(
        "import_pairs",
        "--set",
        "hand",
        str(write_file("hand.jsonl", lines(GOOD, {**GOOD, "incorrect": "It is under the bank."}))),
    )
    assert "2" in capsys.readouterr().out
    target = tmp_path / "out.jsonl"
    call_command("export_pairs", "--set", "hand", "--out", str(target))
    assert [json.loads(line)["incorrect"] for line in target.read_text().splitlines()] == [
        "It is far from the bank.",
        "It is under the bank.",
    ]


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ("{not json", "(JSON, column 2)", "invalid JSON"),
        ([1, 2], None, "must be a JSON object"),
        ({**GOOD, "colour": "red"}, "colour", "unknown field"),
        ({k: v for k, v in GOOD.items() if k != "correct"}, "correct", "is missing"),
        ({**GOOD, "context": []}, "context", "non-empty list"),
        ({**GOOD, "context": ["fine", 3]}, "context", "non-empty list"),
        ({**GOOD, "incorrect": GOOD["correct"]}, "incorrect", "same as the correct"),
        ({**GOOD, "incorrect": ""}, "incorrect", "non-empty string"),
        ({**GOOD, "type": "no spaces allowed"}, "type", "letters, digits"),
        ({**GOOD, "criterion": "best"}, "criterion", "must be one of el, ml"),
        ({**GOOD, "review": "maybe"}, "review", "must be one of pending"),
        ({**GOOD, "provenance": "me"}, "provenance", "JSON object"),
        ({**GOOD, "span": [5, 2], "incorrect_span": [0, 1]}, "span", "0 <= start <= end"),
        ({**GOOD, "span": [0, 3], "incorrect_span": [0, 3]}, "span", "differ outside the spans"),
        ({**GOOD, "span": [0, True], "incorrect_span": [0, 3]}, "span", "0 <= start <= end"),
    ],
)
def test_a_bad_line_names_line_and_field_and_nothing_is_imported(write_file, record, field, message):
    path = write_file("bad.jsonl", lines(GOOD, {**GOOD, "incorrect": "It is behind the bank."}, record))
    with pytest.raises(ImportFileError, match=message) as error:
        pairs_import(set_name="bad", path=path)
    assert (error.value.line, error.value.field) == (3, field)
    assert "bad.jsonl" in str(error.value)
    assert not PairSet.objects.exists() and not Pair.objects.exists()


def test_a_repeated_pair_names_both_lines(write_file):
    with pytest.raises(ImportFileError, match="line 3: the same pair as line 1"):
        pairs_import(set_name="dup", path=write_file("dup.jsonl", lines(GOOD, "", GOOD)))
    assert not PairSet.objects.exists()


def test_a_file_without_pairs_is_refused(write_file):
    with pytest.raises(ImportFileError, match="has no pair"):
        pairs_import(set_name="empty", path=write_file("empty.jsonl", "\n\n"))
    assert not PairSet.objects.exists()


def test_importing_into_an_existing_set_is_refused(built_set, write_file):
    with pytest.raises(UserError, match="exists"):
        pairs_import(set_name="set-a", path=write_file("hand.jsonl", lines(GOOD)))
    assert built_set.pairs.count() == 5


def test_the_same_file_into_the_set_it_made_returns_that_import(write_file):
    path = write_file("hand.jsonl", lines(GOOD))
    first = pairs_import(set_name="hand", path=path)
    assert pairs_import(set_name="hand", path=path) == first  # a job retried after its import committed
    assert Pair.objects.count() == 1


def test_the_admin_download_is_the_export(built_set, admin_client):
    from django.urls import reverse

    out = io.StringIO()
    pairs_export(pair_set=built_set, out=out)
    response = admin_client.get(reverse("admin:pairs_pairset_export", args=[built_set.pk]))
    assert b"".join(response.streaming_content).decode() == out.getvalue()
    assert response["Content-Disposition"] == 'attachment; filename="set-a.jsonl"'
