"""A release of Sato et al.'s released human scores (placeholder texts): its card reports the counts of
`filter_preview` and the kappa of `agreement`, the commands' own output."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.shared_data, pytest.mark.slow, pytest.mark.heavy]


@pytest.fixture
def sato_card(sato_dataset, tmp_path) -> str:
    """The card of a release built from the 1,019 released questions x 4 responses x 5 scores."""
    call_command("build_testset", dataset="sato", name="sato-r1", seed=0, stdout=StringIO())
    call_command("export_testset", "sato-r1", format=["hf"], out=tmp_path / "hf", stdout=StringIO())
    return (tmp_path / "hf" / "README.md").read_text()


def command_json(*args, **options) -> dict:
    out = StringIO()
    call_command(*args, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


def card_counts(card: str) -> dict[str, int]:
    rows = [line.strip("|").split("|") for line in card.splitlines() if line.startswith("| ")]
    return {row[0].strip(): int(row[1]) for row in rows if len(row) == 2 and row[1].strip().isdigit()}


def test_the_cards_counts_are_the_filter_previews(sato_card):
    preview = command_json("filter_preview", dataset="sato")
    counts = card_counts(sato_card)
    assert counts["source questions"] == preview["questions"] == 1019
    for decision, n in preview["questions_by_ground_truth"].items():
        assert counts[f"source questions, ground truth {decision}"] == n
    for decision, n in preview["candidates_by_decision"].items():
        assert counts[f"false candidates {decision}"] == n
    assert counts["passed questions with fewer than 3 false candidates left"] == preview["questions_too_few_false"]
    assert counts["questions in the release"] == preview["buildable_questions"]
    assert counts["of which derived (an acceptable response as ground truth)"] == preview["buildable_derived_questions"]


def test_the_cards_kappa_is_the_agreement_commands(sato_card):
    agreement = command_json("agreement", dataset="sato")
    assert (
        f"Fleiss' kappa {agreement['fleiss_kappa_6']:.3f} over six classes (0-5) and "
        f"{agreement['fleiss_kappa_2']:.3f} over two (> 3 vs <= 3), "
        f"{agreement['items']} responses x {agreement['raters']} raters" in sato_card
    )
    # every released response is in the release, so its own kappa is the dataset's
    assert f"This release's frozen scores: Fleiss' kappa {agreement['fleiss_kappa_6']:.3f} (95 % CI" in sato_card
