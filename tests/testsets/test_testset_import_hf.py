"""import_testset --format hf: a Hugging Face test set folder imported as a dataset and a frozen test set."""

import copy
import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotator, Candidate, Dataset, Question, Score
from core.errors import ImportFileError, UserError
from tests.factories import DatasetFactory
from testsets.items import testset_items
from testsets.models import TestSet, TestSetQuestion
from testsets.services.build import testset_build
from testsets.services.export import testset_export
from testsets.services.import_hf import testset_hf_import
from testsets.services.import_tsv import testset_import

pytestmark = pytest.mark.django_db

CONTEXT = ["Hi.", "Hello.", "Coffee?"]
ORIGINAL = {
    "question_id": "peer-0001",
    "context": CONTEXT,
    "choices": ["The bus is late.", "Yes, please.", "I never drink tea.", "Tomorrow."],
    "label": 1,
    "sources": ["lexical", "ground_truth", "dense", "generated"],
    "derived_from": None,
    "scores": [[1, 1, 2], [5, 5, 4], [0, 1, 1], [2, 1]],
}
UNSCORED = {
    "question_id": "peer-0002",
    "context": ["Ready?", "Almost.", "Hurry up."],
    "choices": ["He went home.", "It rained.", "The shop was closed.", "Coming!"],
    "label": 3,
    "sources": ["lexical", "lexical", "dense", "ground_truth"],
    "derived_from": None,
    "scores": [[], [], [], []],
}
DERIVED = {
    "question_id": "peer-0003",
    "context": CONTEXT,
    "choices": ["He sings.", "Blue is nice.", "Sure, thanks.", "Later."],
    "label": 2,
    "sources": ["dense", "lexical", "lexical", "generated"],
    "derived_from": "peer-0001",
    "scores": [[0, 0, 1], [1, 1, 1], [4, 4, 3], [1, 2, 1]],
}
RELEASE = [ORIGINAL, UNSCORED, DERIVED]


def write_release(folder: Path, records: list[dict], *, data_file: str = "data/test.jsonl") -> Path:
    path = folder / data_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def write_manifest(folder: Path, sha256: str) -> None:
    manifest = {"name": "peer", "files": {"jsonl": {"name": "data/test.jsonl", "sha256": sha256}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def nothing_imported() -> bool:
    return not (
        Dataset.objects.exists()
        or Question.objects.exists()
        or Score.objects.exists()
        or TestSet.objects.exists()
        or Annotator.objects.exists()
    )


def release_items(name: str) -> list[dict]:
    """Each question of the test set as the format writes it: choices, label, sources, scores."""
    result = []
    for item in TestSetQuestion.objects.filter(testset__name=name).select_related("question").order_by("position"):
        candidates = list(item.candidates.select_related("candidate").order_by("position"))
        result.append(
            {
                "context": [t.text for t in item.question.context.turns.order_by("position")],
                "choices": [c.candidate.text for c in candidates],
                "label": next(i for i, c in enumerate(candidates) if c.is_ground_truth),
                "sources": [c.candidate.source for c in candidates],
                "scores": [
                    list(c.candidate.scores.order_by("annotator__external_id").values_list("value", flat=True))
                    for c in candidates
                ],
            }
        )
    return result


def test_questions_choices_labels_and_scores_are_those_of_the_file(tmp_path):
    # given a release of two original questions and one derived question
    folder = write_release(tmp_path / "peer", RELEASE)
    # when imported
    report = testset_hf_import(folder=folder, dataset_name="peer-data", name="peer")
    # then the test set holds each question's choices in the file's order with its label and scores
    assert (report["questions"], report["derived_questions"]) == (3, 1)
    items = release_items("peer")
    for item, record in zip(items, RELEASE, strict=True):
        assert (item["context"], item["choices"], item["label"]) == (
            record["context"],
            record["choices"],
            record["label"],
        )
        assert item["scores"] == record["scores"]


def test_sources_are_kept_and_a_ground_truth_source_is_stored_as_imported(tmp_path):
    testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="d", name="peer")
    sources = [item["sources"] for item in release_items("peer")]
    assert sources[0] == ["lexical", "imported", "dense", "mlm_negative"]
    assert sources[2] == ["dense", "lexical", "lexical", "mlm_negative"]


def test_the_split_sources_are_read_as_they_are(tmp_path):
    # given a release built since the split: a masked-LM negative and a system's response
    record = {**ORIGINAL, "sources": ["system_response", "ground_truth", "dense", "mlm_negative"]}
    # when imported
    testset_hf_import(folder=write_release(tmp_path / "peer", [record]), dataset_name="d", name="peer")
    # then each keeps its source
    assert release_items("peer")[0]["sources"] == ["system_response", "imported", "dense", "mlm_negative"]


@pytest.mark.parametrize("removed", ["perturbed", "manual"])
def test_a_removed_source_is_an_error_naming_the_file_line_and_field(tmp_path, removed):
    record = {**ORIGINAL, "sources": ["lexical", "ground_truth", removed, "dense"]}
    folder = write_release(tmp_path / "peer", [UNSCORED, record])
    with pytest.raises(ImportFileError, match=rf"test.jsonl, line 2, field sources\[2\]: must be one of .*'{removed}'"):
        testset_hf_import(folder=folder, dataset_name="d", name="peer")
    assert not TestSet.objects.exists()


def test_a_source_that_is_not_a_string_is_an_error_naming_its_field(tmp_path):
    record = {**ORIGINAL, "sources": ["lexical", "ground_truth", ["dense"], "dense"]}
    with pytest.raises(ImportFileError, match=r"field sources\[2\]: must be one of"):
        testset_hf_import(folder=write_release(tmp_path / "peer", [record]), dataset_name="d", name="peer")


def test_a_derived_question_keeps_its_link_to_its_original(tmp_path):
    testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="d", name="peer")
    original = Question.objects.get(ground_truth="Yes, please.")
    derived = Question.objects.get(ground_truth="Sure, thanks.")
    assert derived.derived_from == original and derived.context_id == original.context_id
    # its choices are candidates of the original question, as the build makes them
    assert derived.derived_ground_truth.question == original
    assert derived.derived_ground_truth.text == "Sure, thanks."
    assert Candidate.objects.filter(question=original).count() == 8


def test_a_question_may_be_derived_from_a_later_line(tmp_path):
    folder = write_release(tmp_path / "peer", [DERIVED, UNSCORED, ORIGINAL])
    testset_hf_import(folder=folder, dataset_name="d", name="peer")
    first = TestSetQuestion.objects.get(position=1).question
    assert first.ground_truth == "Sure, thanks." and first.derived_from.ground_truth == "Yes, please."


def test_scores_belong_to_placeholder_annotators_of_the_dataset(tmp_path):
    testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="peer-data", name="peer")
    labels = list(Annotator.objects.filter(provider="imported").values_list("external_id", flat=True))
    assert sorted(labels) == ["peer-data#1", "peer-data#2", "peer-data#3"]
    short = Candidate.objects.get(text="Tomorrow.")
    assert list(short.scores.values_list("annotator__external_id", "value")) == [("peer-data#1", 2), ("peer-data#2", 1)]


def test_the_imported_release_exports_with_its_manifest(tmp_path):
    testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="d", name="peer")
    written = testset_export(name="peer", formats=["jsonl"], out_dir=tmp_path / "out")
    records = [json.loads(line) for line in (tmp_path / "out/peer.jsonl").read_text().splitlines()]
    assert [r["ground_truth_index"] for r in records] == [r["label"] for r in RELEASE]
    assert TestSet.objects.get().manifest["imported_from"]["data_file"] == "data/test.jsonl"
    assert len(written.paths) == 2


def test_the_name_comes_from_the_manifest_and_the_dataset_from_the_name(tmp_path):
    folder = write_release(tmp_path / "folder", RELEASE)
    write_manifest(folder, hashlib.sha256((folder / "data/test.jsonl").read_bytes()).hexdigest())
    report = testset_hf_import(folder=folder)
    assert report["sha256_checked"] is True
    assert TestSet.objects.get().name == "peer" and TestSet.objects.get().dataset.name == "peer"


def test_a_data_file_that_does_not_match_the_manifest_sha256_is_refused(tmp_path):
    folder = write_release(tmp_path / "peer", RELEASE)
    write_manifest(folder, hashlib.sha256(b"another file").hexdigest())
    with pytest.raises(ImportFileError, match="sha256") as error:
        testset_hf_import(folder=folder, dataset_name="d", name="peer")
    assert "test.jsonl" in str(error.value) and "manifest.json" in str(error.value)
    assert nothing_imported()


def test_the_card_names_the_test_split_file(tmp_path):
    folder = write_release(tmp_path / "peer", RELEASE, data_file="data/release.jsonl")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/release.jsonl\n"
        "---\n# A release\n"
    )
    report = testset_hf_import(folder=folder, dataset_name="d", name="peer")
    assert report["questions"] == 3


def test_a_card_may_not_point_outside_the_folder(tmp_path):
    write_release(tmp_path, RELEASE, data_file="elsewhere.jsonl")
    folder = tmp_path / "peer"
    folder.mkdir()
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: ../elsewhere.jsonl\n---\n"
    )
    with pytest.raises(ImportFileError, match="not a file inside the folder"):
        testset_hf_import(folder=folder, dataset_name="d", name="peer")


def changed(index: int, **fields) -> list[dict]:
    records = copy.deepcopy(RELEASE)
    records[index].update(fields)
    return records


@pytest.mark.parametrize(
    ("records", "line", "field"),
    [
        (changed(1, question_id=7), 2, "question_id"),
        (changed(1, question_id="peer-0001"), 2, "question_id"),
        (changed(1, context=[]), 2, "context"),
        (changed(1, context=["Ready?", 5, "Hurry up."]), 2, "context[1]"),
        (changed(1, choices=["Coming!"], label=0, sources=["ground_truth"], scores=[[]]), 2, "choices"),
        (changed(1, choices=["He went home.", "It rained.", " ", "Coming!"]), 2, "choices[2]"),
        (changed(1, choices=["He went home.", "It rained.", "it  rained.", "Coming!"]), 2, "choices[2]"),
        (
            changed(1, choices=[*UNSCORED["choices"], "More."], sources=["lexical"] * 5, scores=[[]] * 5),
            2,
            "choices",
        ),
        (changed(1, label=4), 2, "label"),
        (changed(1, label=True), 2, "label"),
        (changed(1, label="3"), 2, "label"),
        (changed(1, sources=["lexical", "lexical", "ground_truth"]), 2, "sources"),
        (changed(1, sources=["bm25", "lexical", "dense", "ground_truth"]), 2, "sources[0]"),
        (changed(1, sources=["ground_truth", "lexical", "dense", "lexical"]), 2, "sources[0]"),
        (changed(1, scores=[[], [], []]), 2, "scores"),
        (changed(1, scores=[[], [6], [], []]), 2, "scores[1][0]"),
        (changed(1, scores=[[], [True], [], []]), 2, "scores[1][0]"),
        (changed(1, scores=[[], [], 3, []]), 2, "scores[2]"),
        (changed(1, colour="red"), 2, "colour"),
        (changed(2, derived_from="peer-0009"), 3, "derived_from"),
        (changed(2, derived_from="peer-0003"), 3, "derived_from"),
        ([*RELEASE, {**DERIVED, "question_id": "peer-0004", "derived_from": "peer-0003"}], 4, "derived_from"),
        (changed(2, context=["Hi.", "Hello.", "Tea?"]), 3, "context"),
        (changed(2, choices=["He sings.", "Blue is nice.", "Yes, please.", "Later."]), 3, "label"),
        (changed(2, choices=["He sings.", "The bus is late.", "Sure, thanks.", "Later."]), 3, "scores[1]"),
    ],
)
def test_a_bad_line_names_file_line_and_field_and_nothing_is_imported(tmp_path, records, line, field):
    folder = write_release(tmp_path / "peer", records)
    with pytest.raises(ImportFileError) as error:
        testset_hf_import(folder=folder, dataset_name="d", name="peer")
    assert (Path(error.value.path).name, error.value.line, error.value.field) == ("test.jsonl", line, field)
    assert nothing_imported()


def test_a_missing_field_is_named(tmp_path):
    records = copy.deepcopy(RELEASE)
    del records[0]["scores"]
    with pytest.raises(ImportFileError, match="line 1, field scores: is missing"):
        testset_hf_import(folder=write_release(tmp_path / "peer", records), dataset_name="d", name="peer")


def test_a_second_derivation_with_the_same_ground_truth_is_refused(tmp_path):
    again = {**DERIVED, "question_id": "peer-0004", "choices": ["Sure, thanks.", "A.", "B.", "C."], "label": 0}
    folder = write_release(tmp_path / "peer", [*RELEASE, again])
    with pytest.raises(ImportFileError, match="line 4, field derived_from: line 3 is derived from"):
        testset_hf_import(folder=folder, dataset_name="d", name="peer")
    assert nothing_imported()


def test_the_same_folder_again_into_the_same_dataset_is_refused_as_the_tsv_import_does(tmp_path):
    folder = write_release(tmp_path / "peer", RELEASE)
    testset_hf_import(folder=folder, dataset_name="d", name="peer")
    with pytest.raises(UserError, match="already contains questions imported from 'peer/data/test.jsonl'"):
        testset_hf_import(folder=folder, dataset_name="d", name="peer-again")
    assert Question.objects.count() == 3 and TestSet.objects.count() == 1


def test_a_test_set_name_is_never_reused(tmp_path):
    folder = write_release(tmp_path / "peer", RELEASE)
    testset_hf_import(folder=folder, dataset_name="d", name="peer")
    with pytest.raises(UserError, match="a test set named 'peer' exists already"):
        testset_hf_import(folder=folder, dataset_name="other", name="peer")
    assert not Dataset.objects.filter(name="other").exists()


def test_a_release_joins_an_existing_dataset_beside_a_tsv_import(tmp_path, write_file):
    testset_import(tsv_path=write_file("t.tsv", "a\tb\tc\td\te\n"), dataset_name="shared")
    testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="shared", name="peer")
    assert Question.objects.filter(dataset__name="shared").count() == 1 + 3


def test_the_command_imports_a_folder_with_format_hf(tmp_path):
    out = StringIO()
    call_command("import_testset", write_release(tmp_path / "peer", RELEASE), format="hf", stdout=out)
    assert json.loads(out.getvalue())["testset"] == "peer"
    assert TestSet.objects.get().items.count() == 3


def test_the_command_refuses_tsv_options_with_format_hf(tmp_path):
    with pytest.raises(CommandError, match="--scores: for the tsv format only"):
        call_command("import_testset", tmp_path, format="hf", scores=tmp_path / "s.jsonl", stdout=StringIO())


def hf_lines(testset: TestSet) -> list[dict]:
    """The test set as the format describes it (what an export to a folder holds)."""
    items = list(testset_items(testset))
    ids = {item.question_id: f"{testset.name}-{item.position:04d}" for item in items}
    return [
        {
            "question_id": ids[item.question_id],
            "context": [t.text for t in item.turns],
            "choices": [c.candidate.text for c in item.candidates],
            "label": next(i for i, c in enumerate(item.candidates) if c.is_ground_truth),
            "sources": ["ground_truth" if c.candidate.is_ground_truth else c.candidate.source for c in item.candidates],
            "derived_from": ids.get(item.derived_from_id),
            "scores": [[value for _, value in c.scores] for c in item.candidates],
        }
        for item in items
    ]


def test_a_built_release_with_a_derived_question_comes_back_as_it_was(tmp_path, scored_question):
    # given a test set built here, one of whose questions is derived
    dataset = DatasetFactory(name="build")
    scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 4)
    scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 7 + [[4, 4, 5, 1, 2]])
    built = hf_lines(testset_build(dataset_name="build", name="r1", seed=1))
    assert sum(line["derived_from"] is not None for line in built) == 1
    # when it is written in the format and imported into another dataset
    testset_hf_import(folder=write_release(tmp_path / "r1", built), dataset_name="copy", name="r1-copy")
    # then the copy holds the same questions, choices, labels, links and scores
    copied = hf_lines(TestSet.objects.get(name="r1-copy"))
    for line in built:
        line["question_id"] = line["question_id"].replace("r1-", "r1-copy-")
        if line["derived_from"]:
            line["derived_from"] = line["derived_from"].replace("r1-", "r1-copy-")
    assert copied == built


def test_a_database_without_filter_rules_is_a_clear_error_and_imports_nothing(tmp_path):
    from annotation.models import FilterRules

    FilterRules.objects.all().delete()
    with pytest.raises(UserError, match="no filter rules in this database"):
        testset_hf_import(folder=write_release(tmp_path / "peer", RELEASE), dataset_name="peer-data", name="peer")
    assert nothing_imported()
