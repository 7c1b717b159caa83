"""The evaluation admin shows measures as read: three decimals, intervals as [a, b], the raw JSON on request."""

import pytest
from django.urls import reverse

from annotation.models import FilterRules
from evaluation.models import Evaluation
from tests.factories import DatasetFactory, SystemFactory
from testsets.models import TestSet

SUMMARY = {
    "system": "gpt2",
    "testset": "t1",
    "questions": 33,
    "correct": 4,
    "accuracy": 0.12121212121212122,
    "ci95": [0.030303030303030304, 0.24242424242424243],
    "per_source": {"bm25": {"n": 99, "rate": 0.8080808080808081, "ci95": [0.7272727272727273, 0.8787878787878788]}},
}


@pytest.fixture
def evaluation(db):
    rules = FilterRules.objects.order_by("-version").first()
    testset = TestSet.objects.create(name="t1", dataset=DatasetFactory(name="d"), rules=rules, seed=0)
    return Evaluation.objects.create(testset=testset, system=SystemFactory(name="gpt2"), summary=SUMMARY)


def test_the_evaluation_list_shows_accuracy_with_three_digits_and_the_interval(admin_client, evaluation):
    page = admin_client.get(reverse("admin:evaluation_evaluation_changelist")).content.decode()
    assert "0.121" in page and "[0.030, 0.242]" in page
    assert "0.1212121" not in page


def test_the_evaluation_summary_is_a_readable_table_with_the_json_in_details(admin_client, evaluation):
    page = admin_client.get(reverse("admin:evaluation_evaluation_change", args=[evaluation.pk])).content.decode()
    # the facts and the per-source table with three digits
    assert '<th>Accuracy</th><td class="num">0.121</td>' in page
    assert '<th>95 % CI</th><td class="num">[0.030, 0.242]</td>' in page
    assert "<th>bm25</th>" in page and '<td class="num">0.808</td>' in page and "[0.727, 0.879]" in page
    # the full precision only inside the raw JSON's details element
    details = page[page.index('<details class="raw">') : page.index("</details>", page.index('<details class="raw">'))]
    assert "0.12121212121212122" in details
    assert "0.12121212121212122" not in page.replace(details, "")
