"""A release's manifest records its shortcut audit at build; its Hugging Face card and croissant.json
state it, as a known limitation when a baseline is above chance. A release built before the audit
existed (no such key in its manifest) keeps the card and Croissant it had."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from tests.factories import DatasetFactory
from testsets.formats.hf.card import render_card
from testsets.formats.hf.croissant import render_croissant
from testsets.formats.hf.facts import release_facts
from testsets.models import TestSet
from testsets.services.build import testset_build

GOOD, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]
OLD_LIMITATIONS = (
    "English open-domain chit-chat only; few annotators per response; a fixed, small set of false "
    "candidates per question."
)


@pytest.fixture
def long_release(db, scored_question) -> TestSet:
    """Twelve questions whose ground truth ("Sure, I will try again tonight (n).") is always longer
    than its false candidates ("false candidate 7-0"): a length shortcut."""
    dataset = DatasetFactory(name="long-ds")
    for _ in range(12):
        scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 3)
    testset = testset_build(dataset_name=dataset.name, name="long-rel", seed=5)
    return TestSet.objects.select_related("dataset").get(pk=testset.pk)


def export(out) -> None:
    call_command("export_testset", "long-rel", format=["hf"], out=out, stdout=StringIO())


def test_the_manifest_records_the_audit_of_the_frozen_questions(long_release):
    audit = long_release.manifest["shortcut_audit"]
    assert (audit["questions"], audit["candidates"], audit["chance"]) == (12, 48, 0.25)
    assert audit["seed"] == 5 and audit["system"] is None
    longest = next(row for row in audit["baselines"] if row["name"] == "longest")
    assert longest["accuracy"] == 1.0 and "longest" in audit["above_chance"]


def test_the_card_loaded_by_huggingface_hub_states_the_audit_and_the_known_limitation(long_release, tmp_path):
    from huggingface_hub import DatasetCard

    export(tmp_path / "hf")
    card = DatasetCard.load(tmp_path / "hf" / "README.md")
    assert card.data.to_dict()["license"] == "unknown"
    assert "## Shortcut audit" in card.text
    assert "| longest reply | 100.0 % (95 % CI 75.8 % to 100.0 %) | yes |" in card.text
    assert "- **Known limitation: shortcuts.** Context-free baselines pick the ground truth above chance" in card.text


def test_croissant_states_the_shortcut_as_a_data_limitation(long_release, tmp_path):
    export(tmp_path / "hf")
    limitations = json.loads((tmp_path / "hf" / "croissant.json").read_text())["rai:dataLimitations"]
    assert limitations.startswith(OLD_LIMITATIONS + " Context-free baselines pick the ground truth above chance")
    assert "longest reply: 100.0 % (95 % CI 75.8 % to 100.0 %)" in limitations


def test_a_release_without_a_shortcut_has_the_audit_but_no_known_limitation(long_release):
    facts = release_facts(long_release)
    for row in facts.manifest["shortcut_audit"]["baselines"]:
        row["above_chance"] = False
    card = render_card(facts, jsonl_bytes=1).decode()
    assert "## Shortcut audit" in card and "Known limitation: shortcuts" not in card
    croissant = json.loads(render_croissant(facts, jsonl_sha256="0" * 64))
    assert croissant["rai:dataLimitations"] == OLD_LIMITATIONS


def test_a_release_built_before_the_audit_keeps_its_card_and_croissant(long_release):
    """Without the manifest's key, the card is the audited card less the audit's lines, and the
    Croissant limitation is the text it always was."""
    facts = release_facts(long_release)
    audited = render_card(facts, jsonl_bytes=1).decode()
    del facts.manifest["shortcut_audit"]
    old = render_card(facts, jsonl_bytes=1).decode()
    section = audited[audited.index("## Shortcut audit") : audited.index("## Evaluate with lm-evaluation-harness")]
    limitation = audited[audited.index("- **Known limitation: shortcuts.**") : audited.index("\n\n## Shortcut audit")]
    assert old == audited.replace(section, "").replace("\n" + limitation, "")
    assert "shortcut" not in old.lower()
    assert json.loads(render_croissant(facts, jsonl_sha256="0" * 64))["rai:dataLimitations"] == OLD_LIMITATIONS


def test_an_imported_release_records_the_audit_of_its_questions(long_release, tmp_path):
    from testsets.services.import_hf import testset_hf_import

    export(tmp_path / "hf")
    testset_hf_import(folder=tmp_path / "hf", dataset_name="peer-data", name="peer")
    imported = TestSet.objects.get(name="peer").manifest["shortcut_audit"]
    built = long_release.manifest["shortcut_audit"]
    assert (imported["questions"], imported["chance"]) == (built["questions"], built["chance"])
    assert "longest" in imported["above_chance"]


def test_a_release_above_the_limit_is_audited_on_a_seeded_sample_the_card_names(
    db, scored_question, settings, tmp_path
):
    settings.WELLCHOSEN_MANIFEST_AUDIT_MAX_QUESTIONS = 8
    dataset = DatasetFactory(name="sampled-ds")
    for _ in range(12):
        scored_question(dataset=dataset, gt=GOOD, false=[WRONG] * 3)
    first = testset_build(dataset_name=dataset.name, name="sampled-a", seed=5).manifest["shortcut_audit"]
    again = testset_build(dataset_name=dataset.name, name="sampled-b", seed=5).manifest["shortcut_audit"]
    assert (first["questions"], first["candidates"], first["sampled_from"]) == (8, 32, 12)
    assert first == again  # the same sample for the same seed
    call_command("export_testset", "sampled-a", format=["hf"], out=tmp_path / "hf", stdout=StringIO())
    assert "8 questions (a seeded sample of the 12)" in (tmp_path / "hf" / "README.md").read_text()


def test_a_release_within_the_limit_records_no_sample(long_release):
    assert "sampled_from" not in long_release.manifest["shortcut_audit"]
