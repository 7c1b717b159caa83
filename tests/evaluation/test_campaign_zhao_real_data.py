"""The real Zhao et al. (2020) ratings imported into the database: the campaign report's reference-based
Table 3 is the one zhao_reference_report computes straight from the file."""

import pytest

from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from evaluation.human import NON_SYSTEMS
from evaluation.models import Campaign, GeneratedResponse, ResponseRating, System
from evaluation.report import zhao_reference_report
from evaluation.services.campaign_report import campaign_report_refresh
from evaluation.services.human_import import zhao_ratings_import

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

RELATIVE = "human_annotated/dstc10_track5_dev_format/dailydialog-zhao_eval.json"
TRIALS = 200


@pytest.fixture
def zhao_path(shared_data):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    return shared_data / RELATIVE


def test_import_of_the_real_file(db, zhao_path):
    report = zhao_ratings_import(path=zhao_path, campaign_name="zhao")
    # 900 responses of 21 "models": 19 generation systems (not 18), the ground truth, a negative sample
    assert (report["items"], report["systems"], report["campaign_generations"]) == (900, 21, 19)
    assert GeneratedResponse.objects.count() == 900
    assert ResponseRating.objects.count() == 900 * 4 * 4  # 4 aspects, 4 annotators
    assert set(System.objects.values_list("description", flat=True)) >= NON_SYSTEMS


def test_campaign_report_reproduces_the_reference_based_table_of_the_file(db, zhao_path):
    # given the file imported into a campaign with the same resamples and seed as the direct report
    zhao_ratings_import(path=zhao_path, campaign_name="zhao")
    campaign = Campaign.objects.get(name="zhao")
    Campaign.objects.filter(pk=campaign.pk).update(bootstrap_resamples=TRIALS, seed=0)
    campaign.refresh_from_db()
    # when the campaign report is computed from the database
    report = campaign_report_refresh(campaign=campaign)
    expected = zhao_reference_report(zhao_path, trials=TRIALS, seed=0)
    # then the 19 generation systems have the file's human scores and metrics
    names = {s.name: s.description for s in System.objects.all()}
    ours = {names[row["system"]]: row for row in report["leaderboard"]}
    theirs = {row["system"]: row for row in expected["systems"]}
    assert set(ours) == set(theirs) and len(ours) == 19
    for model, row in theirs.items():
        assert ours[model]["human"] == pytest.approx(row["human"], abs=1e-9)
        assert ours[model]["metrics"] == pytest.approx(row["metrics"], abs=1e-9)
    # and every row of Table 3 (BLEU-1/2, METEOR, ROUGE-L, split-half) is the same, CIs included
    # (the system slugs sort in the order of the model strings, so the bootstrap draws the same systems)
    assert [r["name"] for r in report["table"]["rows"]] == [r["name"] for r in expected["rows"]]
    for ours_row, theirs_row in zip(report["table"]["rows"], expected["rows"], strict=True):
        for method in ("spearman", "kendall"):
            for field, value in theirs_row[method].items():
                assert ours_row[method][field] == pytest.approx(value, abs=1e-9), (ours_row["name"], method, field)
    # with no test set, the report says CHOSEN and RANDOM are missing instead of failing
    assert report["notes"] == ["no test set: no CHOSEN accuracies and no RANDOM trials"]
