"""A large export renders its JSONL and CSV in a forked child, block by block, beside the other
files (testsets.formats.registry.render_exports): the bytes are those of a render in one process."""

import dataclasses
import os

import pytest

from core.forked import fork_available
from tests.factories import DatasetFactory
from testsets.formats import registry
from testsets.formats.registry import EXPORT_FILES, render_exports
from testsets.models import TestSet
from testsets.services.build import testset_build
from testsets.services.export import testset_export

pytestmark = pytest.mark.skipif(not fork_available(), reason="needs fork")

WANTED = [(kind, file.version) for kind, file in EXPORT_FILES.items()]


@pytest.fixture
def blocks_of_three(monkeypatch):
    monkeypatch.setattr(registry, "EXPORT_BLOCK", 3)


def eight_questions(scored_question) -> str:
    dataset = DatasetFactory(name="forked")
    for _ in range(8):
        scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1], [0, 1, 1, 2, 1], [1, 2, 1, 1, 0]])
    return dataset.name


def rendered(testset: TestSet, **options) -> list[str]:
    chunks = list(render_exports(testset, WANTED, **options))
    return ["".join(texts) for texts in zip(*chunks, strict=True)]


@pytest.mark.django_db
def test_the_files_rendered_apart_are_the_files_rendered_here(scored_question, settings, blocks_of_three):
    # given a test set of 8 questions, read 3 at a time, rendered in one process
    testset = testset_build(dataset_name=eight_questions(scored_question), name="forked", seed=3)
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 10**9
    here = rendered(testset)
    # when the JSONL and the CSV are rendered in forked children
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0
    children = []
    real_init = registry.ForkedCall.__init__

    def counting_init(self, compute):
        children.append(compute)
        real_init(self, compute)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry.ForkedCall, "__init__", counting_init)
        apart = rendered(testset)
    # then one child rendered each block, and every file has the same bytes (the CSV's header once)
    assert len(children) == 3
    assert apart == here
    csv = here[list(EXPORT_FILES).index("csv")]
    assert csv.count("question_position,") == 1 and csv.count("\r\n") == 1 + 8 * 4


@pytest.mark.django_db
def test_the_original_texts_rendered_apart_are_those_rendered_here(scored_question, settings, blocks_of_three):
    testset = testset_build(dataset_name=eight_questions(scored_question), name="forked", seed=3)
    options = {"originals": [False, False, True, True]}
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 10**9
    here = rendered(testset, **options)
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0
    assert rendered(testset, **options) == here


@pytest.mark.django_db
def test_a_build_and_its_export_match_when_their_files_are_rendered_apart(
    scored_question, settings, blocks_of_three, tmp_path
):
    # given the forked rendering for every size
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0
    # when a test set is built (hashing its files) and exported (checking them against the manifest)
    testset = testset_build(dataset_name=eight_questions(scored_question), name="forked", seed=3)
    export = testset_export(name="forked", formats=["tsv", "jsonl", "csv"], out_dir=tmp_path)
    # then the export matched every recorded hash, and the files are those a render here gives
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 10**9
    here = dict(zip(EXPORT_FILES, rendered(testset), strict=True))
    for kind, file in EXPORT_FILES.items():
        assert (tmp_path / file.filename(testset)).read_bytes() == here[kind].encode("utf-8")
    assert len(export.paths) == 5


@pytest.mark.django_db
def test_an_error_in_the_child_is_raised_here_and_leaves_no_child(scored_question, settings, blocks_of_three):
    testset = testset_build(dataset_name=eight_questions(scored_question), name="forked", seed=3)
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0

    def broken(items, testset, version):
        for _ in items:
            raise ValueError("renderer broken")
        yield from ()

    children = []
    real_init = registry.ForkedCall.__init__

    def recording_init(self, compute):
        real_init(self, compute)
        children.append(self._pid)

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(EXPORT_FILES, "jsonl", dataclasses.replace(EXPORT_FILES["jsonl"], render=broken))
        patch.setattr(registry.ForkedCall, "__init__", recording_init)
        with pytest.raises(ValueError, match="renderer broken"):
            rendered(testset)
    assert children
    for pid in children:  # every child has ended and been waited for
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
