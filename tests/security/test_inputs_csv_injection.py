"""CSV formula injection: no text cell of a CSV we write starts a spreadsheet formula; the TSV and
JSONL keep the exact text for tools."""

import csv
import io
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from config.apps import PROJECT_APPS
from tests.factories import AnnotatorFactory, CandidateFactory, DatasetFactory, QuestionFactory, ScoreFactory
from testsets.models import TestSet
from testsets.services.build import testset_build
from testsets.services.export import testset_export

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
HYPERLINK = '=HYPERLINK("http://evil.example/x","click here")'
PAYLOADS = [
    HYPERLINK,
    "+SUM(1,2)",
    "-2+3",
    "@SUM(A1:A9)",
    "- Yes, of course.",
    "\t=1+1",
    "\r=1+1",
    "=cmd|' /C calc'!A0",
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def testset(db) -> TestSet:
    """Every text a researcher's CSV shows (context, ground truth, candidates, their provenance)
    starts a formula; a false candidate's retrieval score is negative."""
    dataset = DatasetFactory(name="inj")
    annotators = AnnotatorFactory.create_batch(5)
    for i, payload in enumerate(PAYLOADS):
        question = QuestionFactory(dataset=dataset, context__turns=[payload, f"@{i} second", f"-{i} third"])
        ground_truth = question.candidates.get(is_ground_truth=True)
        ground_truth.text = f"={i}+{payload}"
        ground_truth.save()
        falses = [
            CandidateFactory(
                question=question, text=f"{payload} ({i}.{n})", retrieval_score=-3.5, retriever_version="@v1"
            )
            for n in range(3)
        ]
        for annotator in annotators:
            ScoreFactory(candidate=ground_truth, annotator=annotator, value=5)
            for candidate in falses:
                ScoreFactory(candidate=candidate, annotator=annotator, value=1)
    return TestSet.objects.select_related("dataset").get(pk=testset_build(dataset_name="inj", name="inj", seed=1).pk)


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def formula_cells(table: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would evaluate: they start a formula and are no plain number."""

    def number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    return [cell for row in table for cell in row if cell.startswith(FORMULA_STARTS) and not number(cell)]


def test_no_cell_of_the_exported_csv_starts_a_formula(testset, tmp_path):
    testset_export(name="inj", formats=["csv"], out_dir=tmp_path)
    table = rows((tmp_path / "inj.csv").read_text(encoding="utf-8"))
    assert len(table) > len(PAYLOADS) * 4
    assert formula_cells(table) == []


def test_no_cell_of_the_admins_csv_download_starts_a_formula(admin_client, testset):
    response = admin_client.get(reverse("admin:testsets_testset_download", args=[testset.pk, "csv"]))
    assert formula_cells(rows(b"".join(response.streaming_content).decode("utf-8"))) == []


def test_an_escaped_cell_keeps_its_text_after_the_quote(testset, tmp_path):
    testset_export(name="inj", formats=["csv"], out_dir=tmp_path)
    table = rows((tmp_path / "inj.csv").read_text(encoding="utf-8"))
    header = table[0]
    contexts = {row[header.index("context_1")] for row in table[1:]}
    assert "'" + HYPERLINK in contexts
    assert {row[header.index("retriever_version")] for row in table[1:]} >= {"'@v1"}


def test_a_negative_score_stays_a_number(testset, tmp_path):
    testset_export(name="inj", formats=["csv"], out_dir=tmp_path)
    table = rows((tmp_path / "inj.csv").read_text(encoding="utf-8"))
    assert "-3.5" in {row[table[0].index("retrieval_score")] for row in table[1:]}


def test_tsv_and_jsonl_keep_the_exact_text(testset, tmp_path):
    testset_export(name="inj", formats=["tsv", "jsonl"], out_dir=tmp_path)
    tsv_cells = {cell for line in (tmp_path / "inj.tsv").read_text().splitlines() for cell in line.split("\t")}
    assert HYPERLINK in tsv_cells and "'" + HYPERLINK not in tsv_cells
    records = [json.loads(line) for line in (tmp_path / "inj.jsonl").read_text().splitlines()]
    assert HYPERLINK in {turn["text"] for record in records for turn in record["context"]}


def test_every_csv_the_project_writes_goes_through_core_csv_safe():
    writers = re.compile(r"csv\.(writer|DictWriter)\(")
    found = [
        str(path.relative_to(ROOT))
        for app in (*PROJECT_APPS, "config")
        for path in (ROOT / app).rglob("*.py")
        if writers.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["core/csv_safe.py"]
