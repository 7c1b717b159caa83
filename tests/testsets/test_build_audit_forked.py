"""A large build computes its manifest's shortcut audit in a forked child while the server checks
the foreign keys of the rows it wrote (testsets.services.build.audit_beside_key_checks): the same
audit as one computed here, and an error on either side leaves no child behind."""

import os

import pytest

from core.forked import fork_available
from tests.factories import DatasetFactory
from testsets.services import build
from testsets.services.build import testset_build
from testsets.shortcuts.balance import BalanceOptions

pytestmark = [pytest.mark.skipif(not fork_available(), reason="needs fork"), pytest.mark.django_db]


@pytest.fixture
def dataset_name(scored_question) -> str:
    dataset = DatasetFactory(name="audited")
    for _ in range(12):
        scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1], [0, 1, 1, 2, 1], [1, 2, 1, 1, 0]])
    return dataset.name


@pytest.fixture
def children(monkeypatch) -> list[int]:
    """The pid of each child the build forks."""
    pids: list[int] = []
    real_init = build.ForkedCall.__init__

    def recording_init(self, compute):
        real_init(self, compute)
        pids.append(self._pid)

    monkeypatch.setattr(build.ForkedCall, "__init__", recording_init)
    return pids


def test_the_audit_computed_in_a_child_is_the_audit_computed_here(dataset_name, settings, children):
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 10**9
    here = testset_build(dataset_name=dataset_name, name="here", seed=4).manifest["shortcut_audit"]
    assert children == []
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0
    apart = testset_build(dataset_name=dataset_name, name="apart", seed=4).manifest["shortcut_audit"]
    # one child per block of files, and one for the audit
    assert len(children) == 2
    assert apart == here
    assert here["questions"] == 12


def test_an_error_in_the_audit_is_raised_here_and_leaves_no_child(dataset_name, settings, children, monkeypatch):
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0

    def broken(testset, *, pools):
        raise ValueError("audit broken")

    monkeypatch.setattr(build, "testset_manifest_audit", broken)
    with pytest.raises(ValueError, match="audit broken"):
        testset_build(dataset_name=dataset_name, name="broken", seed=4)
    assert_all_ended(children)


def test_an_error_in_the_key_checks_ends_the_audits_child(dataset_name, settings, children, monkeypatch):
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0

    def failing_checks():
        raise RuntimeError("a key check failed")

    monkeypatch.setattr(build, "deferred_checks_run", failing_checks)
    with pytest.raises(RuntimeError, match="a key check failed"):
        testset_build(dataset_name=dataset_name, name="failing", seed=4)
    assert len(children) == 2
    assert_all_ended(children)


def assert_all_ended(pids: list[int]) -> None:
    assert pids
    for pid in pids:  # every child has ended and been waited for
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_shortcut_aware_build_gives_the_same_audit_in_a_child(scored_question, settings):
    # the parent fits classifiers of its own (the shortcut-aware choice) before it forks the audit
    dataset = DatasetFactory(name="balanced")
    for _ in range(12):
        scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 5)
    builds = {}
    for name, fork_min in (("here", 10**9), ("apart", 0)):
        settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = fork_min
        testset = testset_build(dataset_name="balanced", name=name, seed=4, balance=BalanceOptions(rounds=2))
        builds[name] = testset.manifest
    assert builds["apart"]["shortcut_audit"] == builds["here"]["shortcut_audit"]
    assert builds["apart"]["shortcut_balance"] == builds["here"]["shortcut_balance"]


def test_the_importing_thread_has_ended_before_the_build_forks(dataset_name, settings, monkeypatch, tmp_path):
    import sys
    import threading

    # given audit modules whose import takes longer than the build's steps before its forks
    (tmp_path / "slow_audit_module.py").write_text("import time\ntime.sleep(3)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_audit_module", raising=False)
    monkeypatch.setattr(build, "AUDIT_MODULES", ("slow_audit_module",))
    settings.WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = 0
    at_forks = []
    real_init = build.ForkedCall.__init__

    def recording_init(self, compute):
        # at each fork: an importing thread still running? the module loaded?
        alive = [t for t in threading.enumerate() if t.name == "imports-beside"]
        at_forks.append((bool(alive), "slow_audit_module" in sys.modules))
        real_init(self, compute)

    monkeypatch.setattr(build.ForkedCall, "__init__", recording_init)
    # when the build runs
    testset_build(dataset_name=dataset_name, name="joined", seed=4)
    # then at each of its forks (the files' block and the audit) the import had ended
    assert at_forks == [(False, True), (False, True)]
