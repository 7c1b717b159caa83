from io import StringIO

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from core.models import Job, JobStatus
from tests.factories import DatasetFactory
from testsets.models import TestSet

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


def run(*args, **kwargs) -> str:
    out = StringIO()
    call_command(*args, stdout=out, **kwargs)
    return out.getvalue()


def test_a_failing_import_is_a_command_error_and_a_failed_job(db, write_file):
    path = write_file("t.tsv", "a\tb\n")
    with pytest.raises(CommandError, match="t.tsv, line 1: expected at least 5 tab-separated fields"):
        run("import_testset", path, dataset="x")
    assert Job.objects.get().status == JobStatus.FAILED


def test_export_of_an_unknown_test_set_is_a_command_error(db, tmp_path):
    with pytest.raises(CommandError, match="no test set 'nope'"):
        run("export_testset", "nope", out=tmp_path)


@pytest.mark.parametrize(
    ("alias", "command"), [("build_release", "build_testset"), ("export_release", "export_testset")]
)
def test_the_release_commands_say_they_are_aliases(alias, command):
    help_text = load_command_class("testsets", alias).help
    assert help_text == f"Alias of {command}. {load_command_class('testsets', command).help}"


def test_build_release_and_export_release_do_what_the_test_set_commands_do(db, scored_question, tmp_path):
    # given a dataset with two buildable questions
    dataset = DatasetFactory(name="alias")
    for _ in range(2):
        scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    # when one test set is built with build_testset and one with its alias, with the same seed
    run("build_testset", dataset="alias", name="by-testset", seed=5)
    run("build_release", dataset="alias", name="by-release", seed=5)
    # then both are build_testset jobs with the same questions, order and files
    assert list(Job.objects.values_list("kind", "status")) == [("build_testset", JobStatus.SUCCEEDED)] * 2
    by_testset, by_release = (TestSet.objects.get(name=n) for n in ("by-testset", "by-release"))
    assert {k: f["sha256"] for k, f in by_release.manifest["files"].items()} == {
        k: f["sha256"] for k, f in by_testset.manifest["files"].items()
    }
    # and export_release writes exactly the files export_testset writes
    run("export_testset", "by-release", out=tmp_path / "testset")
    run("export_release", "by-release", out=tmp_path / "release")
    written = sorted(p.name for p in (tmp_path / "testset").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "release").iterdir()) and len(written) == 5
    for name in written:
        assert (tmp_path / "release" / name).read_bytes() == (tmp_path / "testset" / name).read_bytes()
    with pytest.raises(CommandError, match="no test set 'nope'"):
        run("export_release", "nope", out=tmp_path)


def test_export_takes_several_formats_after_one_format_flag_as_the_docs_show(db, scored_question, tmp_path):
    # given a built test set
    dataset = DatasetFactory(name="formats")
    scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG] * 3)
    run("build_testset", dataset="formats", name="formats-set", seed=1)
    # when it is exported with "--format tsv jsonl" (argv, as typed on the command line), and with --format repeated
    run("export_testset", "formats-set", "--format", "tsv", "jsonl", "--out", str(tmp_path / "one"))
    run("export_testset", "formats-set", "--format", "tsv", "--format", "jsonl", "--out", str(tmp_path / "two"))
    # then both write the TSV (with its scores file), the JSONL and the manifest, and no CSV
    written = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "two").iterdir())
    assert any(n.endswith(".tsv") for n in written) and any(n.endswith(".jsonl") for n in written)
    assert not any(n.endswith(".csv") for n in written)
