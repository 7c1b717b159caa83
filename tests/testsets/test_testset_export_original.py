import csv
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Candidate, Turn
from tests.factories import DatasetFactory, UtteranceFactory
from testsets.models import TestSet
from testsets.services.build import testset_build
from testsets.services.export import testset_export

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


@pytest.fixture
def testset(db, scored_question) -> TestSet:
    """A test set of one question whose first turn, ground truth and one retrieved false candidate
    were changed by a normaliser at import (their originals kept)."""
    dataset = DatasetFactory(name="ds-orig", text_normaliser="detokenize")
    question = scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    turn = question.context.turns.order_by("position").first()
    Turn.objects.filter(pk=turn.pk).update(original_text=turn.text + " (as imported)")
    Candidate.objects.filter(question=question, is_ground_truth=True).update(
        original_text="Ground truth , as imported ."
    )
    false = question.candidates.filter(is_ground_truth=False).order_by("id").first()
    utterance = UtteranceFactory(text=false.text, original_text=false.text + " , as imported")
    Candidate.objects.filter(pk=false.pk).update(utterance=utterance)
    return TestSet.objects.select_related("dataset").get(
        pk=testset_build(dataset_name=dataset.name, name="orig", seed=5).pk
    )


def test_original_text_writes_the_originals_beside_the_files(testset, tmp_path):
    export = testset_export(name="orig", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path, original_text=True)
    names = [p.name for p in export.paths]
    assert {"orig.original.tsv", "orig.original.jsonl", "orig.original.csv"} <= set(names)
    assert "orig.original.human_scores.jsonl" not in names  # it carries no text
    row = (tmp_path / "orig.original.tsv").read_text().rstrip("\n").split("\t")
    assert row[0].endswith(" (as imported)") and row[3] == "Ground truth , as imported ."
    assert any(field.endswith(" , as imported") for field in row[4:])


def test_the_original_jsonl_and_csv_carry_the_originals(testset, tmp_path):
    testset_export(name="orig", formats=["jsonl", "csv"], out_dir=tmp_path, original_text=True)
    record = json.loads((tmp_path / "orig.original.jsonl").read_text())
    assert record["candidates"][record["ground_truth_index"]]["text"] == "Ground truth , as imported ."
    assert record["context"][0]["text"].endswith(" (as imported)")
    rows = list(csv.DictReader((tmp_path / "orig.original.csv").open()))
    assert {r["text"] for r in rows if r["is_ground_truth"] == "1"} == {"Ground truth , as imported ."}


def test_the_files_the_manifest_records_are_unchanged(testset, tmp_path):
    plain = testset_export(name="orig", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path / "a").paths
    with_originals = testset_export(
        name="orig", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path / "b", original_text=True
    ).paths
    assert [(p.name, p.read_bytes()) for p in plain] == [
        (p.name, p.read_bytes()) for p in with_originals if ".original." not in p.name
    ]
    assert "Ground truth , as imported ." not in (tmp_path / "b" / "orig.tsv").read_text()


def test_without_the_option_no_original_is_written(testset, tmp_path):
    testset_export(name="orig", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path)
    assert not list(tmp_path.glob("*.original.*"))


def test_a_note_says_the_manifest_records_no_original_file(testset, tmp_path):
    export = testset_export(name="orig", formats=["tsv"], out_dir=tmp_path, original_text=True)
    assert any("orig.original.tsv: the texts as imported" in note for note in export.notes)


def test_the_command_takes_original_text(testset, tmp_path):
    out, err = StringIO(), StringIO()
    call_command(
        "export_testset", "orig", "--format", "tsv", "--original-text", "--out", str(tmp_path), stdout=out, stderr=err
    )
    assert str(tmp_path / "orig.original.tsv") in out.getvalue()


def test_original_text_with_no_format_that_carries_texts_is_refused(testset, tmp_path):
    with pytest.raises(CommandError, match="--original-text writes the files of tsv, jsonl, csv"):
        call_command("export_testset", "orig", "--format", "hf", "--original-text", "--out", str(tmp_path))
