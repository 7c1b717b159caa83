import csv
import hashlib
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Candidate
from core.errors import UserError
from tests.factories import DatasetFactory
from testsets.formats.registry import render_export
from testsets.items import testset_items
from testsets.models import TestSet, TestSetCandidate
from testsets.services.build import testset_build
from testsets.services.export import testset_export

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]


def build(scored_question, *, n_questions: int, name: str = "rel") -> TestSet:
    dataset = DatasetFactory(name=f"ds-{name}")
    for _ in range(n_questions):
        scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    return TestSet.objects.select_related("dataset").get(
        pk=testset_build(dataset_name=dataset.name, name=name, seed=5).pk
    )


@pytest.fixture
def testset(db, scored_question):
    return build(scored_question, n_questions=3)


def test_tsv_is_the_released_format(testset, tmp_path):
    testset_export(name="rel", formats=["tsv"], out_dir=tmp_path)
    rows = [line.split("\t") for line in (tmp_path / "rel.tsv").read_text().splitlines()]
    assert len(rows) == 3 and all(len(row) == 7 for row in rows)
    first = testset.items.order_by("position").first()
    assert rows[0][:3] == list(first.question.context.turns.values_list("text", flat=True))
    assert rows[0][3] == first.question.ground_truth


def test_human_scores_are_aligned_with_the_tsv(testset, tmp_path):
    testset_export(name="rel", formats=["tsv"], out_dir=tmp_path)
    scores = [json.loads(line) for line in (tmp_path / "rel.human_scores.jsonl").read_text().splitlines()]
    assert scores[0] == [GOOD_GT, WRONG, WRONG, WRONG]


def test_jsonl_carries_ids_provenance_and_every_score(testset, tmp_path):
    testset_export(name="rel", formats=["jsonl"], out_dir=tmp_path)
    record = json.loads((tmp_path / "rel.jsonl").read_text().splitlines()[0])
    assert record["candidates"][record["ground_truth_index"]]["is_ground_truth"] is True
    false = next(c for c in record["candidates"] if not c["is_ground_truth"])
    assert (false["source"], false["retrieval_score"], false["rank"], false["retriever_version"]) == (
        "lexical",
        12.5,
        1,
        "bm25-test-v1",
    )
    assert [s["value"] for s in false["scores"]] == WRONG
    assert len({s["annotator"] for s in false["scores"]}) == 5


def test_csv_has_one_row_per_candidate(testset, tmp_path):
    testset_export(name="rel", formats=["csv"], out_dir=tmp_path)
    rows = list(csv.DictReader((tmp_path / "rel.csv").open()))
    assert len(rows) == 12
    assert sum(r["is_ground_truth"] == "1" for r in rows) == 3
    assert rows[0]["context_1"] and rows[0]["n_scores"] == "5"


def test_exporting_twice_gives_byte_identical_files_matching_the_manifest(testset, tmp_path):
    first = testset_export(name="rel", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path / "a").paths
    second = testset_export(name="rel", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path / "b").paths
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    digests = {entry["name"]: entry["sha256"] for entry in testset.manifest["files"].values()}
    for path in first:
        if path.name in digests:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digests[path.name]
    assert json.loads((tmp_path / "a" / "rel.manifest.json").read_text()) == testset.manifest


def test_an_altered_test_set_is_detected_and_not_written(testset, tmp_path):
    # given a test set whose frozen rows were tampered with
    TestSetCandidate.objects.filter(item__testset=testset).update(scores=[["x:y", 3]])
    # when exported
    with pytest.raises(UserError, match="does not match its manifest"):
        testset_export(name="rel", formats=["tsv"], out_dir=tmp_path)
    # then no file (not even a partial one) is left behind
    assert not any(p.suffix in {".tsv", ".jsonl"} for p in tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["tsv", "human_scores", "jsonl", "csv"])
def test_export_query_count_does_not_grow_with_the_test_set(db, scored_question, kind):
    # given a small and a five times larger test set
    small = build(scored_question, n_questions=2, name="small")
    large = build(scored_question, n_questions=10, name="large")

    def queries(testset):
        with CaptureQueriesContext(connection) as ctx:
            for _ in render_export(testset, kind):
                pass
        return len(ctx.captured_queries)

    # then both are read with the same, small number of queries (no N+1)
    assert queries(small) == queries(large) == 4


def test_testset_items_read_in_chunks_with_three_queries_each(db, scored_question, django_assert_num_queries):
    testset = build(scored_question, n_questions=5)
    # 5 items in chunks of 2 = 3 chunks x (items, turns, candidates) + the final empty page
    with django_assert_num_queries(10):
        items = list(testset_items(testset, chunk=2))
    assert [i.position for i in items] == [1, 2, 3, 4, 5]


def test_unknown_test_set_is_an_error(db, tmp_path):
    with pytest.raises(UserError, match="no test set 'nope'"):
        testset_export(name="nope", formats=["tsv"], out_dir=tmp_path)


def made_before_the_csv_rule(testset: TestSet) -> TestSet:
    """The manifest a test set built before CSV format version 2 has: no format versions, and the
    sha256 of the CSV with its cells as stored (and of the JSONL without provenance)."""
    csv_v1 = "".join(render_export(testset, "csv", version=1)).encode("utf-8")
    jsonl_v1 = "".join(render_export(testset, "jsonl", version=1)).encode("utf-8")
    manifest = {**testset.manifest, "format_version": 1}
    manifest["files"] = {
        kind: {k: v for k, v in entry.items() if k != "format_version"}
        for kind, entry in testset.manifest["files"].items()
    }
    manifest["files"]["csv"]["sha256"] = hashlib.sha256(csv_v1).hexdigest()
    manifest["files"]["jsonl"]["sha256"] = hashlib.sha256(jsonl_v1).hexdigest()
    TestSet.objects.filter(pk=testset.pk).update(manifest=manifest)
    testset.refresh_from_db()
    return testset


def test_a_manifest_records_the_format_version_of_each_file(testset):
    versions = {kind: entry["format_version"] for kind, entry in testset.manifest["files"].items()}
    assert versions == {"tsv": 1, "human_scores": 1, "jsonl": 4, "csv": 4}
    assert testset.manifest["format_version"] == 2


def test_csv_version_1_is_the_cells_as_stored_with_newline_ends(testset):
    TestSetCandidate.objects.filter(item__testset=testset).update(scores=[["-x:y", 3]])
    text = "".join(render_export(testset, "csv", version=1))
    assert "\r\n" not in text and ",-x:y=3\n" in text


def test_an_older_test_set_exports_a_spreadsheet_safe_csv_checked_against_its_recorded_hash(testset, tmp_path):
    made_before_the_csv_rule(testset)
    export = testset_export(name="rel", formats=["csv"], out_dir=tmp_path)
    written = (tmp_path / "rel.csv").read_bytes()
    assert written == "".join(render_export(testset, "csv")).encode("utf-8")
    assert hashlib.sha256(written).hexdigest() != testset.manifest["files"]["csv"]["sha256"]
    assert len(export.notes) == 1 and "format version 4" in export.notes[0] and "version 1" in export.notes[0]
    assert json.loads((tmp_path / "rel.manifest.json").read_text()) == testset.manifest


def test_an_older_test_set_reproduces_its_published_csv_with_version_1(testset, tmp_path):
    made_before_the_csv_rule(testset)
    export = testset_export(name="rel", formats=["csv"], out_dir=tmp_path, csv_version=1)
    digest = hashlib.sha256((tmp_path / "rel.csv").read_bytes()).hexdigest()
    assert digest == testset.manifest["files"]["csv"]["sha256"] and export.notes == []


def test_an_altered_older_test_set_is_still_detected(testset, tmp_path):
    made_before_the_csv_rule(testset)
    TestSetCandidate.objects.filter(item__testset=testset).update(scores=[["x:y", 3]])
    with pytest.raises(UserError, match="does not match its manifest"):
        testset_export(name="rel", formats=["csv"], out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_jsonl_version_2_carries_each_candidates_retrievers_and_provenance(testset):
    false_ids = TestSetCandidate.objects.filter(item__testset=testset, is_ground_truth=False).values("candidate_id")
    Candidate.objects.filter(id__in=false_ids).update(
        provenance={"method": "mlm", "seed": 3}, retrieval=[{"retriever": "lexical", "rank": 2}]
    )
    [record] = [json.loads(line) for line in render_export(testset, "jsonl")][:1]
    false = [c for c in record["candidates"] if not c["is_ground_truth"]]
    assert false and all(c["provenance"] == {"method": "mlm", "seed": 3} for c in false)
    assert all(c["retrieval"] == [{"retriever": "lexical", "rank": 2}] for c in false)
    old = json.loads(next(iter(render_export(testset, "jsonl", version=1))))
    assert all("provenance" not in c and "retrieval" not in c for c in old["candidates"])


def test_an_older_test_set_exports_jsonl_with_provenance_checked_against_its_recorded_hash(testset, tmp_path):
    made_before_the_csv_rule(testset)
    export = testset_export(name="rel", formats=["jsonl"], out_dir=tmp_path)
    assert (tmp_path / "rel.jsonl").read_bytes() == "".join(render_export(testset, "jsonl")).encode("utf-8")
    assert len(export.notes) == 1 and "jsonl format version 4" in export.notes[0]


def test_an_older_test_set_reproduces_its_published_jsonl_with_version_1(testset, tmp_path):
    made_before_the_csv_rule(testset)
    export = testset_export(name="rel", formats=["jsonl"], out_dir=tmp_path, jsonl_version=1)
    digest = hashlib.sha256((tmp_path / "rel.jsonl").read_bytes()).hexdigest()
    assert digest == testset.manifest["files"]["jsonl"]["sha256"] and export.notes == []


def test_an_unknown_csv_version_is_an_error(testset, tmp_path):
    with pytest.raises(UserError, match="CSV has format versions 1 to 4, not 5"):
        testset_export(name="rel", formats=["csv"], out_dir=tmp_path, csv_version=5)


def test_the_command_names_the_version_it_wrote(testset, tmp_path):
    made_before_the_csv_rule(testset)
    out, err = StringIO(), StringIO()
    call_command("export_testset", "rel", "--format", "csv", "--out", str(tmp_path), stdout=out, stderr=err)
    assert out.getvalue().split() == [str(tmp_path / "rel.csv"), str(tmp_path / "rel.manifest.json")]
    assert "rel.csv: written in csv format version 4" in err.getvalue()
    call_command("export_testset", "rel", "--format", "csv", "--csv-version", "1", "--out", str(tmp_path / "v1"))
    digest = hashlib.sha256((tmp_path / "v1" / "rel.csv").read_bytes()).hexdigest()
    assert digest == testset.manifest["files"]["csv"]["sha256"]


@pytest.fixture
def with_derived(db, scored_question):
    """One question with 6 kept false candidates and one acceptable one: the test set has the
    original question and one derived from it (the acceptable candidate as its ground truth)."""
    dataset = DatasetFactory(name="ds-derived")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 6 + [GOOD_GT])
    testset = testset_build(dataset_name=dataset.name, name="der", seed=2)
    assert testset.manifest["counts"]["derived_questions"] == 1
    return TestSet.objects.select_related("dataset").get(pk=testset.pk)


def test_jsonl_says_which_questions_are_derived(with_derived):
    records = [json.loads(line) for line in render_export(with_derived, "jsonl")]
    assert [(r["derived"], r["derived_from_question_id"] is not None) for r in records] == [
        (False, False),
        (True, True),
    ]
    assert records[1]["derived_from_question_id"] == records[0]["question_id"]
    assert all("derived" not in json.loads(line) for line in render_export(with_derived, "jsonl", version=2))


def test_csv_has_a_derived_column(with_derived):
    rows = list(csv.DictReader(StringIO("".join(render_export(with_derived, "csv")))))
    assert list(rows[0])[:4] == ["question_position", "question_id", "derived_from_question_id", "derived"]
    assert {(r["question_position"], r["derived"]) for r in rows} == {("1", "0"), ("2", "1")}
    assert "derived" not in next(csv.reader(StringIO(next(iter(render_export(with_derived, "csv", version=2))))))


def test_an_export_with_derived_questions_round_trips_through_the_importer(with_derived, tmp_path):
    """The TSV stays Sato et al.'s format (no column for it): derived questions import as questions."""
    from annotation.models import Dataset
    from testsets.services.import_tsv import testset_import

    testset_export(name="der", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path)
    report = testset_import(
        tsv_path=tmp_path / "der.tsv", scores_path=tmp_path / "der.human_scores.jsonl", dataset_name="der-back"
    )
    assert report["questions"] == 2 and report["candidates"] == 8
    back = Dataset.objects.get(name="der-back").questions.order_by("pk")
    exported = [json.loads(line) for line in (tmp_path / "der.jsonl").read_text().splitlines()]
    assert [q.ground_truth for q in back] == [r["candidates"][r["ground_truth_index"]]["text"] for r in exported]
