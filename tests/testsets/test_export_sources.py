"""The candidate sources a release publishes: a masked-LM negative and a system's response each by
its own name from JSONL and CSV format version 4; a release built before keeps "generated" for both
in the versions its manifest records, byte for byte, and so does its Hugging Face folder."""

import csv
import hashlib
import json
from io import StringIO

import pytest

from annotation.models import Candidate, CandidateSource
from tests.factories import DatasetFactory
from testsets.formats.hf.folder_write import hf_folder_files
from testsets.formats.registry import render_export
from testsets.models import TestSet
from testsets.services.build import testset_build
from testsets.services.export import testset_export

GOOD_GT = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
SPLIT = {CandidateSource.MLM_NEGATIVE.value, CandidateSource.SYSTEM_RESPONSE.value}


@pytest.fixture
def release(db, scored_question) -> TestSet:
    """Two questions whose three false candidates are a lexical hit, a masked-LM negative and a
    system's response."""
    dataset = DatasetFactory(name="ds-sources")
    for _ in range(2):
        question = scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
        false = list(question.candidates.filter(is_ground_truth=False).order_by("id"))
        Candidate.objects.filter(pk=false[1].pk).update(source=CandidateSource.MLM_NEGATIVE)
        Candidate.objects.filter(pk=false[2].pk).update(source=CandidateSource.SYSTEM_RESPONSE)
    testset = testset_build(dataset_name=dataset.name, name="srcrel", seed=4)
    return TestSet.objects.select_related("dataset").get(pk=testset.pk)


def jsonl_sources(text: str) -> set[str]:
    return {c["source"] for line in text.splitlines() for c in json.loads(line)["candidates"]}


def csv_sources(text: str) -> set[str]:
    return {row["source"] for row in csv.DictReader(StringIO(text))}


def hf_sources(testset: TestSet) -> set[str]:
    lines = hf_folder_files(testset)["data/test.jsonl"].decode().splitlines()
    return {source for line in lines for source in json.loads(line)["sources"]}


def built_before_the_split(testset: TestSet) -> TestSet:
    """The manifest a test set built before the split has: JSONL and CSV version 3, with the sha256
    of the files as that code wrote them, which named both sources "generated" and were otherwise
    the same bytes as version 4."""
    old_jsonl = "".join(render_export(testset, "jsonl"))
    old_csv = "".join(render_export(testset, "csv"))
    for source in SPLIT:
        old_jsonl = old_jsonl.replace(f'"source": "{source}"', '"source": "generated"')
        old_csv = old_csv.replace(f",{source},", ",generated,")
    manifest = json.loads(json.dumps(testset.manifest))
    for kind, text in (("jsonl", old_jsonl), ("csv", old_csv)):
        manifest["files"][kind].update(sha256=hashlib.sha256(text.encode()).hexdigest(), format_version=3)
    TestSet.objects.filter(pk=testset.pk).update(manifest=manifest)
    testset.refresh_from_db()
    return testset


def test_a_new_release_names_a_masked_lm_negative_and_a_systems_response_apart(release):
    expected = {"imported", "lexical", *SPLIT}
    assert jsonl_sources("".join(render_export(release, "jsonl"))) == expected
    assert csv_sources("".join(render_export(release, "csv"))) == expected
    assert hf_sources(release) == {"ground_truth", "lexical", *SPLIT}


def test_a_new_release_records_the_versions_with_the_split_sources(release):
    assert release.manifest["files"]["jsonl"]["format_version"] == 4
    assert release.manifest["files"]["csv"]["format_version"] == 4


def test_versions_before_4_write_generated_for_both(release):
    assert jsonl_sources("".join(render_export(release, "jsonl", version=3))) == {"imported", "lexical", "generated"}
    assert csv_sources("".join(render_export(release, "csv", version=3))) == {"imported", "lexical", "generated"}


def test_a_release_built_before_the_split_rewrites_its_published_bytes(release, tmp_path):
    # given a release built before the split (its manifest records version 3 and that file's sha256)
    built_before_the_split(release)
    # when its JSONL and CSV are written in the versions it recorded
    export = testset_export(name="srcrel", formats=["jsonl", "csv"], out_dir=tmp_path, jsonl_version=3, csv_version=3)
    # then they are the bytes it published
    for kind in ("jsonl", "csv"):
        digest = hashlib.sha256((tmp_path / f"srcrel.{kind}").read_bytes()).hexdigest()
        assert digest == release.manifest["files"][kind]["sha256"]
    assert export.notes == []


def test_a_release_built_before_the_split_is_checked_and_then_written_in_version_4(release, tmp_path):
    built_before_the_split(release)
    export = testset_export(name="srcrel", formats=["jsonl"], out_dir=tmp_path)
    assert jsonl_sources((tmp_path / "srcrel.jsonl").read_text()) >= SPLIT
    assert len(export.notes) == 1 and "jsonl format version 4" in export.notes[0] and "version 3" in export.notes[0]


def card_tools(testset: TestSet) -> list[str]:
    card = hf_folder_files(testset)["README.md"].decode()
    tools = card[card.index("- Retrieved and generated candidates") :].splitlines()[1:]
    return tools[: next(i for i, line in enumerate(tools) if not line.startswith("  - "))]


def test_the_card_counts_the_split_sources_of_a_new_release(release):
    assert card_tools(release) == [
        "  - lexical: bm25-test-v1: 2",
        "  - mlm_negative: bm25-test-v1: 2",
        "  - system_response: bm25-test-v1: 2",
    ]


def test_the_hugging_face_folder_of_a_release_built_before_the_split_says_generated(release):
    built_before_the_split(release)
    assert hf_sources(release) == {"ground_truth", "lexical", "generated"}
    assert card_tools(release) == ["  - generated: bm25-test-v1: 4", "  - lexical: bm25-test-v1: 2"]
