"""``in`` on an integer column behaves alike on SQLite and PostgreSQL: a number the column cannot
hold matches no row instead of raising OverflowError (SQLite)."""

from annotation.models import Dataset
from tests.factories import DatasetFactory


def test_a_number_beyond_the_column_matches_no_row(db):
    DatasetFactory()
    assert not Dataset.objects.filter(pk__in=[2**63, -(2**63) - 1]).exists()


def test_the_numbers_in_range_still_match(db):
    dataset = DatasetFactory()
    assert list(Dataset.objects.filter(pk__in=[dataset.pk, 2**70])) == [dataset]


def test_excluding_numbers_beyond_the_column_keeps_every_row(db):
    dataset = DatasetFactory()
    assert list(Dataset.objects.exclude(pk__in=[2**70])) == [dataset]
