"""The shortcut audit finds the one shortcut a small set was built to carry, and no other."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Candidate, CandidateSource
from core.errors import UserError
from core.models import Job, JobStatus
from core.services.jobs import job_create, job_execute
from core.text import text_hash
from tests.factories import DatasetFactory, QuestionFactory
from tests.testsets.shortcut_sets import as_pools, length_shortcut, no_shortcut, style_shortcut
from testsets.job_params import AuditShortcutsParams
from testsets.models import ShortcutAudit
from testsets.selectors import dataset_pools
from testsets.shortcuts.audit import shortcut_audit_compute
from testsets.shortcuts.baselines import AuditOptions
from testsets.shortcuts.features import candidate_table
from testsets.shortcuts.stats import wilson_interval


def rows(audit: dict) -> dict[str, dict]:
    return {row["name"]: row for row in audit["baselines"]}


def within_chance(row: dict, chance: float) -> bool:
    return row["ci95"][0] <= chance <= row["ci95"][1]


def test_a_length_shortcut_is_found_by_the_longest_reply_and_the_classifier():
    audit = shortcut_audit_compute(as_pools(length_shortcut()), AuditOptions())
    by_name = rows(audit)
    assert by_name["longest"]["accuracy"] == 1.0 and by_name["longest"]["above_chance"]
    assert by_name["shortest"]["accuracy"] == 0.0 and not by_name["shortest"]["above_chance"]
    assert by_name["surface_classifier"]["accuracy"] >= 0.9 and by_name["surface_classifier"]["above_chance"]
    assert set(audit["above_chance"]) == {"longest", "surface_classifier"}


def test_a_style_shortcut_is_found_by_the_classifier_while_lengths_stay_at_chance():
    audit = shortcut_audit_compute(as_pools(style_shortcut()), AuditOptions())
    by_name, chance = rows(audit), audit["chance"]
    assert by_name["surface_classifier"]["accuracy"] >= 0.9 and audit["above_chance"] == ["surface_classifier"]
    assert within_chance(by_name["longest"], chance) and within_chance(by_name["shortest"], chance)
    top = {f["feature"] for f in by_name["surface_classifier"]["top_features"]}
    assert top & {"spaced_punctuation", "split_clitics", "spaced_punctuation_vs_question", "split_clitics_vs_question"}


def test_a_set_without_a_shortcut_keeps_every_baseline_within_chance():
    audit = shortcut_audit_compute(as_pools(no_shortcut()), AuditOptions())
    assert audit["chance"] == 0.25 and audit["above_chance"] == []
    assert all(within_chance(row, audit["chance"]) for row in audit["baselines"])


def test_the_classifier_never_scores_a_question_it_was_trained_on(monkeypatch):
    """Out-of-fold: every question's candidates sit in one test fold, and no training fold holds them."""
    from sklearn.model_selection import GroupKFold

    splits = []
    real_split = GroupKFold.split

    def recording(self, X, y=None, groups=None):
        for train, test in real_split(self, X, y, groups):
            splits.append((train, test))
            yield train, test

    monkeypatch.setattr(GroupKFold, "split", recording)
    pools = as_pools(style_shortcut(20))
    table = candidate_table(pools)
    shortcut_audit_compute(pools, AuditOptions(folds=4))
    assert len(splits) == 4
    tested = np.concatenate([test for _, test in splits])
    assert sorted(tested) == list(range(len(table.y)))
    for train, test in splits:
        assert not set(table.groups[train]) & set(table.groups[test])


def test_the_audit_is_the_same_for_the_same_seed_and_records_it():
    pools = as_pools(style_shortcut(30))
    first = shortcut_audit_compute(pools, AuditOptions(seed=7, folds=3))
    assert first == shortcut_audit_compute(pools, AuditOptions(seed=7, folds=3))
    assert (first["seed"], first["folds"]) == (7, 3)


def test_ties_share_the_credit():
    """Four candidates of one length: the longest-reply rule cannot decide and earns 1/4, not 1."""
    from testsets.shortcuts.pools import Pool

    audit = shortcut_audit_compute([Pool(1, ("aaaa", "bbbb", "cccc", "dddd"), 2)], AuditOptions())
    assert rows(audit)["longest"]["accuracy"] == 0.25
    assert rows(audit)["surface_classifier"]["skipped"]


def test_the_wilson_interval_is_statsmodels_and_ends_at_zero_and_one():
    from statsmodels.stats.proportion import proportion_confint

    assert wilson_interval(30, 100) == pytest.approx(proportion_confint(30, 100, method="wilson"))
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def dataset_with(name: str, sets) -> None:
    """A dataset whose questions carry the candidates of ``sets`` (the ground truth as imported)."""
    dataset = DatasetFactory(name=name)
    for texts, label in sets:
        question = QuestionFactory(dataset=dataset, ground_truth=texts[label])
        Candidate.objects.bulk_create(
            Candidate(question=question, text=t, text_hash=text_hash(t), source=CandidateSource.LEXICAL)
            for i, t in enumerate(texts)
            if i != label
        )


def test_a_datasets_pools_are_every_original_question_with_all_its_candidates(db):
    sets = length_shortcut(5)
    dataset_with("pools", sets)
    pools = list(dataset_pools(dataset=DatasetFactory(name="pools")))
    assert [sorted(p.texts) for p in pools] == [sorted(texts) for texts, _ in sets]
    assert [p.texts[p.label] for p in pools] == [texts[label] for texts, label in sets]


def test_the_command_audits_a_datasets_pools_and_stores_the_audit(db):
    dataset_with("styled", style_shortcut(40))
    out = StringIO()
    call_command("audit_shortcuts", dataset="styled", folds=4, stdout=out)
    text = out.getvalue()
    assert "dataset pools styled: 40 questions, 160 candidates, chance 25.0 %" in text
    assert "surface_classifier" in text and "ABOVE CHANCE" in text
    audit = ShortcutAudit.objects.get()
    assert audit.dataset.name == "styled" and audit.testset is None
    assert audit.result["above_chance"] == ["surface_classifier"] and audit.result["folds"] == 4


def test_the_command_prints_the_stored_audit_as_json(db):
    dataset_with("long", length_shortcut(12))
    out = StringIO()
    call_command("audit_shortcuts", dataset="long", json=True, stdout=out)
    assert json.loads(out.getvalue()) == ShortcutAudit.objects.get().result


def test_the_command_wants_one_of_a_dataset_or_a_test_set(db):
    with pytest.raises(CommandError, match="either --dataset or --testset"):
        call_command("audit_shortcuts", stdout=StringIO())


def test_an_unknown_system_is_refused_before_anything_is_computed(db):
    dataset_with("long", length_shortcut(12))
    with pytest.raises(UserError, match="no system 'nope'"):
        from testsets.services.shortcut_audit import shortcut_audit_run

        shortcut_audit_run(dataset_name="long", system="nope")
    assert not ShortcutAudit.objects.exists()


def test_the_job_kind_runs_the_audit_and_says_what_it_found(db):
    dataset_with("long", length_shortcut(12))
    job = job_create(params=AuditShortcutsParams(dataset="long"), enqueue=False)
    job_execute(job_id=job.pk)
    job = Job.objects.get(pk=job.pk)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["audit_id"] == ShortcutAudit.objects.get().pk
    assert "above chance: longest, surface_classifier" in AuditShortcutsParams(dataset="long").summary(job.result)


def test_a_rating_dataset_is_refused(db):
    DatasetFactory(name="ratings", task="rate")
    with pytest.raises(UserError, match="rates generated responses"):
        from testsets.services.shortcut_audit import shortcut_audit_run

        shortcut_audit_run(dataset_name="ratings")
