"""The malformed-file corpus through every importer (tests/security/importers_cases.py builds the
files): each is a clear error naming the file and its line (or item) and field, or a counted skip;
after an error no table has gained or changed a row. Runs on SQLite and on PostgreSQL alike."""

import re

import pytest

from core.errors import UserError
from tests.security.importers_cases import CASES, Case
from tests.security.importers_worlds import IMPORTERS, database_rows

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def crowd_settings(settings):
    settings.WELLCHOSEN_PUBLIC_URL = "https://wellchosen.example.org"


def test_the_corpus_has_over_a_hundred_files_across_every_importer():
    assert len(CASES) >= 100
    assert {case.importer for case in CASES} == set(IMPORTERS)
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("name", sorted(IMPORTERS))
def test_the_valid_file_each_case_starts_from_is_imported(name, tmp_path):
    importer = IMPORTERS[name]
    world = importer.setup(tmp_path)
    path = tmp_path / importer.filename
    path.write_bytes("".join(line + "\n" for line in importer.base(world)).encode("utf-8"))
    report = importer.run(path, world)
    assert all(value >= 0 for value in report.values() if isinstance(value, int))


@pytest.mark.parametrize("case", [c for c in CASES if c.skip is None], ids=lambda c: c.id)
def test_a_malformed_file_is_a_clear_error_and_imports_nothing(case: Case, tmp_path):
    importer = IMPORTERS[case.importer]
    world = importer.setup(tmp_path)
    path = tmp_path / (importer.filename + case.suffix)
    path.write_bytes(case.build(importer.base(world)))
    before = database_rows(importer, world)

    with pytest.raises(UserError) as raised:
        importer.run(path, world)

    message = str(raised.value)
    assert path.name in message
    if case.line is not None:
        assert re.search(rf"\b{importer.where(case.line)}\b", message)
    if case.field is not None:
        assert importer.field(case.field) in message
    message.encode("utf-8")  # printable as it is: no lone surrogate copied from the file
    assert database_rows(importer, world) == before


@pytest.mark.parametrize("case", [c for c in CASES if c.skip is not None], ids=lambda c: c.id)
def test_a_damaged_line_is_skipped_and_counted(case: Case, tmp_path):
    importer = IMPORTERS[case.importer]
    world = importer.setup(tmp_path)
    path = tmp_path / (importer.filename + case.suffix)
    path.write_bytes(case.build(importer.base(world)))

    report = importer.run(path, world)

    assert report[case.skip] == 1
    assert all(value >= 0 for value in report.values() if isinstance(value, int)), report
