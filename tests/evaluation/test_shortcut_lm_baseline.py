"""The shortcut audit's candidate-only language-model baseline: a registered system scores each
test-set question's candidates with an empty context, and picks its likeliest one."""

from io import StringIO

import pytest
from django.core.management import call_command

from core.errors import UserError
from evaluation.scoring.base import select
from evaluation.scoring.loading import scorer_for
from evaluation.shortcut_baseline import CandidateOnlyLM
from testsets.items import testset_items
from testsets.models import ShortcutAudit
from testsets.services.shortcut_audit import shortcut_audit_run
from testsets.shortcuts.baselines import shortcut_baselines
from testsets.shortcuts.stats import wilson_interval


def test_evaluation_registers_the_baseline_with_the_audit():
    assert CandidateOnlyLM in shortcut_baselines()


def test_the_audit_of_a_test_set_scores_its_candidates_without_their_context(testset, gpt_system):
    call_command("audit_shortcuts", testset=testset.name, system=gpt_system.name, stdout=StringIO())
    audit = ShortcutAudit.objects.get(testset=testset)
    row = next(r for r in audit.result["baselines"] if r["name"] == "candidate_only_lm")
    scorer = scorer_for(gpt_system)
    items = list(testset_items(testset))
    scores = scorer.score([[] for _ in items], [[c.candidate.text for c in i.candidates] for i in items])
    correct = [item.candidates[select(q)].is_ground_truth for item, q in zip(items, scores, strict=True)]
    assert row["system"] == "gpt" and audit.result["system"] == "gpt"
    assert row["accuracy"] == round(sum(correct) / len(items), 4)
    assert row["ci95"] == [round(b, 4) for b in wilson_interval(sum(correct), len(items))]


def test_without_a_system_the_audit_leaves_the_language_model_baseline_out(testset):
    audit = shortcut_audit_run(testset_name=testset.name)
    assert "candidate_only_lm" not in {r["name"] for r in audit.result["baselines"]}


def test_a_system_that_cannot_score_is_refused(testset):
    from evaluation.services.systems import system_register

    system_register(name="ext", kind="external")
    with pytest.raises(UserError, match="cannot score candidates"):
        shortcut_audit_run(testset_name=testset.name, system="ext")
