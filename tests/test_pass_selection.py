"""The PostgreSQL pass keeps the tests that can reach the database (tests/conftest.py)."""

from types import SimpleNamespace

import pytest

from tests.conftest import pytest_collection_modifyitems, uses_database


class Item(SimpleNamespace):
    def get_closest_marker(self, name):
        return name if name in self.marks else None


def items():
    return [
        Item(name="marked", marks={"django_db"}, fixturenames=[]),
        Item(name="factory", marks=set(), fixturenames=["question", "db"]),  # a fixture that needs the db
        Item(name="pure", marks=set(), fixturenames=["tmp_path"]),
        Item(name="workers", marks={"workers"}, fixturenames=[]),
        Item(name="engine", marks={"engine"}, fixturenames=["tmp_path"]),
    ]


def test_a_test_uses_the_database_by_its_mark_or_by_a_fixture_it_needs():
    assert [uses_database(i) for i in items()] == [True, True, False, False, False]


@pytest.mark.parametrize(("flag", "kept"), [("1", ["marked", "factory", "workers", "engine"]), ("", None)])
def test_the_database_only_pass_leaves_out_what_cannot_reach_the_database(monkeypatch, flag, kept):
    monkeypatch.setenv("WELLCHOSEN_TEST_DATABASE_ONLY", flag)
    deselected = []
    config = SimpleNamespace(hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    collected = items()
    pytest_collection_modifyitems(config, collected)
    assert [i.name for i in collected] == (kept or [i.name for i in items()])
    assert [i.name for i in deselected] == (["pure"] if kept else [])
