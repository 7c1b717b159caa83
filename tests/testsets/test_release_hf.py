"""export_testset --format hf: the folder loads with the real tools (datasets, mlcroissant) and is stable."""

import hashlib
import json
import zipfile
from io import BytesIO, StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Candidate
from tests.factories import DatasetFactory
from testsets.items import testset_items
from testsets.models import TestSet, TestSetCandidate
from testsets.services.build import testset_build

GOOD = [5, 5, 4, 5, 5]
WRONG = [1, 1, 2, 1, 1]
FOLDER_FILES = {
    "data/test.jsonl",
    "data/test.parquet",
    "README.md",
    "croissant.json",
    "lm_eval/wellchosen_hf-rel.yaml",
    "manifest.json",
}


@pytest.fixture
def release(db, scored_question) -> TestSet:
    """Three plain questions (one with a dense false candidate) and one whose seven scored responses
    yield a derived question."""
    dataset = DatasetFactory(name="hf-ds")
    for n in range(3):
        question = scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 3)
        if n == 0:
            false = question.candidates.filter(is_ground_truth=False).first()
            Candidate.objects.filter(pk=false.pk).update(source="dense", retriever_version="minilm-test-v2")
    scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 6 + [GOOD])
    testset = testset_build(dataset_name=dataset.name, name="hf-rel", seed=3)
    return TestSet.objects.select_related("dataset").get(pk=testset.pk)


def export(name: str, out) -> dict[str, bytes]:
    call_command("export_testset", name, format=["hf"], out=out, stdout=StringIO())
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def expected_questions(testset: TestSet) -> list[dict]:
    """The release read through the project's own reader, independently of the HF renderer."""
    return [
        {
            "context": [t.text for t in item.turns],
            "choices": [c.candidate.text for c in item.candidates],
            "label": [c.is_ground_truth for c in item.candidates].index(True),
        }
        for item in testset_items(testset)
    ]


def test_the_folder_holds_exactly_its_files(release, tmp_path):
    assert set(export("hf-rel", tmp_path / "hf")) == FOLDER_FILES


def test_records_follow_the_release_and_name_derived_questions_by_key(release, tmp_path):
    files = export("hf-rel", tmp_path / "hf")
    records = [json.loads(line) for line in files["data/test.jsonl"].decode().splitlines()]
    assert [list(r) for r in records] == [
        ["question_id", "context", "choices", "label", "sources", "derived_from", "scores"]
    ] * len(records)
    assert [r["question_id"] for r in records] == [f"hf-rel-{i:04d}" for i in range(1, len(records) + 1)]
    assert [{k: r[k] for k in ("context", "choices", "label")} for r in records] == expected_questions(release)
    derived = [r for r in records if r["derived_from"]]
    assert len(derived) == 1
    original = next(r for r in records if r["question_id"] == derived[0]["derived_from"])
    assert original["context"] == derived[0]["context"] and original["derived_from"] is None
    assert records[0]["scores"][records[0]["label"]] == GOOD
    assert records[0]["sources"][records[0]["label"]] == "ground_truth"
    assert sorted(records[0]["sources"]) == ["dense", "ground_truth", "lexical", "lexical"]


def test_datasets_loads_the_folder_through_the_cards_yaml(release, tmp_path):
    import datasets

    folder = tmp_path / "hf"
    export("hf-rel", folder)
    loaded = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    assert [{k: row[k] for k in ("context", "choices", "label")} for row in loaded] == expected_questions(release)
    assert loaded.features["derived_from"].dtype == "string"


def test_the_parquet_holds_the_jsonl_records(release, tmp_path):
    import pyarrow.parquet as pq

    files = export("hf-rel", tmp_path / "hf")
    records = [json.loads(line) for line in files["data/test.jsonl"].decode().splitlines()]
    assert pq.read_table(BytesIO(files["data/test.parquet"])).to_pylist() == records


def test_exporting_twice_gives_the_same_bytes_and_the_manifest_holds_their_sha256(release, tmp_path):
    first = export("hf-rel", tmp_path / "a")
    second = export("hf-rel", tmp_path / "b")
    assert first == second
    manifest = json.loads(first["manifest.json"])
    assert set(manifest["files"]) == FOLDER_FILES - {"manifest.json"}
    for path, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256(first[path]).hexdigest()
    assert manifest["release_manifest"] == release.manifest


def test_mlcroissant_validates_the_metadata_and_reads_the_jsonl_records(release, tmp_path):
    import mlcroissant as mlc

    folder = tmp_path / "hf"
    files = export("hf-rel", folder)
    dataset = mlc.Dataset(str(folder / "croissant.json"))
    assert not dataset.metadata.issues.errors and not dataset.metadata.issues.warnings
    read = [
        {key.split("/", 1)[1]: _decoded(value) for key, value in record.items()}
        for record in dataset.records("questions")
    ]
    assert read == [json.loads(line) for line in files["data/test.jsonl"].decode().splitlines()]


def _decoded(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def test_the_card_states_the_license_and_why_an_unknown_one_matters(release, tmp_path):
    card = export("hf-rel", tmp_path / "a")["README.md"].decode()
    assert card.startswith('---\nlicense: "unknown"\n')
    assert "License: unknown" in card
    TestSet.objects.filter(pk=release.pk).update(license="cc-by-4.0")
    card = export("hf-rel", tmp_path / "b")["README.md"].decode()
    assert card.startswith('---\nlicense: "cc-by-4.0"\n') and "License: unknown" not in card


def test_the_card_names_the_retrievers_and_the_counts(release, tmp_path):
    card = export("hf-rel", tmp_path / "hf")["README.md"].decode()
    assert "  - dense: minilm-test-v2: 1" in card
    assert f"| questions in the release | {release.manifest['counts']['questions']} |" in card
    assert "| of which derived (an acceptable response as ground truth) | 1 |" in card


def test_the_admin_downloads_the_folder_as_a_zip(release, admin_client, tmp_path):
    response = admin_client.get(reverse("admin:testsets_testset_download", args=[release.pk, "hf"]))
    assert response["Content-Disposition"] == 'attachment; filename="hf-rel.hf.zip"'
    archive = zipfile.ZipFile(BytesIO(response.content))
    files = export("hf-rel", tmp_path / "hf")
    assert {name: archive.read(name) for name in archive.namelist()} == files


def test_the_unzipped_download_loads_in_datasets(release, admin_client, tmp_path):
    import datasets

    response = admin_client.get(reverse("admin:testsets_testset_download", args=[release.pk, "hf"]))
    folder = tmp_path / "hf-rel.hf"  # what an archive tool names the folder it unzips into
    zipfile.ZipFile(BytesIO(response.content)).extractall(folder)
    loaded = datasets.load_dataset(str(folder))
    assert loaded["test"].num_rows == release.manifest["counts"]["questions"]


def test_the_card_and_croissant_state_the_crowd_batches_pay(release, tmp_path):
    from django.utils import timezone

    from crowd.models import CrowdBatch

    files = export("hf-rel", tmp_path / "a")
    assert "Recruitment and pay: TODO" in files["README.md"].decode()
    CrowdBatch.objects.create(
        dataset=release.dataset,
        name="pilot",
        provider="mturk",
        settings={"reward": "0.45"},
        published_at=timezone.now(),
    )
    CrowdBatch.objects.create(dataset=release.dataset, name="draft", provider="mturk", settings={"reward": "9.99"})
    files = export("hf-rel", tmp_path / "b")
    line = "Crowd batch pilot on Amazon Mechanical Turk: 0.45 per assignment"
    assert line in files["README.md"].decode() and "9.99" not in files["README.md"].decode()
    assert json.loads(files["croissant.json"])["rai:dataAnnotationPlatform"].startswith(line)


def test_staff_without_the_view_permission_cannot_download_the_folder(release, client):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    response = client.get(reverse("admin:testsets_testset_download", args=[release.pk, "hf"]))
    assert response.status_code == 403


def test_the_admin_changes_the_license_and_nothing_else(release, admin_client):
    url = reverse("admin:testsets_testset_change", args=[release.pk])
    response = admin_client.post(url, {"license": "cc-by-4.0", "seed": 99, "name": "renamed"})
    assert response.status_code == 302
    release.refresh_from_db()
    assert (release.license, release.seed, release.name) == ("cc-by-4.0", 3, "hf-rel")


def test_the_card_shows_the_question_id_pattern_as_text_not_as_an_html_tag(release, tmp_path):
    card = export(release.name, tmp_path)["README.md"].decode()
    assert "'&lt;release&gt;-&lt;position&gt;'" in card and "<release>" not in card


def test_the_lm_eval_task_states_its_context_form(release, tmp_path):
    files = export(release.name, tmp_path)
    task = next(content for path, content in files.items() if path.startswith("lm_eval/")).decode()
    assert "# Context form: plain template" in task and "--apply_chat_template" in task


def test_the_card_says_how_many_decisions_rest_on_fewer_scores(release, tmp_path):
    card = export("hf-rel", tmp_path / "a")["README.md"].decode()
    assert "- Stopping: tolerance 0 (0: a response stops only when its decision can no longer change); " in card
    assert "decisions rest on fewer than 5 scores, 0 of them made by the model" in card


def test_the_card_says_how_many_of_the_release_s_own_responses_rest_on_fewer_scores(release, tmp_path):
    card = export("hf-rel", tmp_path / "a")["README.md"].decode()
    responses = TestSetCandidate.objects.filter(item__testset=release).values("candidate_id").distinct().count()
    assert f"  - In this release: 0 of its {responses} responses (ground truths and false candidates" in card


def test_the_card_reports_per_source_what_the_annotators_made_of_the_false_candidates(release, tmp_path):
    card = export("hf-rel", tmp_path / "hf")["README.md"].decode()
    # 8 lexical false candidates scored clearly wrong and the 7 of the question with an acceptable one
    # (1 of them); 1 dense candidate, clearly wrong
    assert "| lexical | 15 | 6.7% (1) | 0.0% (0) | 15 |" in card
    assert "| dense | 1 | 0.0% (0) | 0.0% (0) | 1 |" in card


def test_a_release_built_before_the_per_source_counts_says_nothing_of_them(release, tmp_path):
    del release.manifest["candidates_by_source"]
    release.save(update_fields=["manifest"])
    card = export("hf-rel", tmp_path / "hf")["README.md"].decode()
    assert "per source (a candidate is annotated" not in card and "| lexical | 15 |" not in card
