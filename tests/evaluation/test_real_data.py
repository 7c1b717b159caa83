"""The whole path on real DailyDialog questions: import a released test set, freeze it, evaluate a system."""

import json
import random

import pytest
from django.core.management import call_command

from evaluation.models import CandidateResult, Evaluation, EvaluationStatus
from testsets.services.build import testset_build
from testsets.services.import_tsv import testset_import

pytestmark = pytest.mark.shared_data


@pytest.fixture
def dailydialog_testset(db, shared_data, tmp_path):
    """40 DailyDialog test questions (3-turn context, 4th turn, 3 false 4th turns of other dialogues),
    scored as a clear test set would be (ground truth 5s, false candidates 1s)."""
    dialogues = []
    for line in (shared_data / "dailydialog" / "test" / "dialogues_test.txt").open(encoding="utf-8"):
        turns = [t.strip() for t in line.split("__eou__") if t.strip()]
        if len(turns) >= 4 and len({*turns[:4]}) == 4:
            dialogues.append(turns)
        if len(dialogues) == 40:
            break
    rng = random.Random(0)
    rows, scores = [], []
    for i, turns in enumerate(dialogues):
        others = rng.sample([d[3] for j, d in enumerate(dialogues) if j != i and d[3] != turns[3]], 3)
        rows.append("\t".join([*turns[:3], turns[3], *others]))
        scores.append(json.dumps([[5] * 5, [1] * 5, [1] * 5, [1] * 5]))
    tsv, jsonl = tmp_path / "dd.tsv", tmp_path / "dd_scores.jsonl"
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    jsonl.write_text("\n".join(scores) + "\n", encoding="utf-8")
    testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="dd-test")
    return testset_build(dataset_name="dd-test", name="dd-r1", seed=0)


def test_a_tiny_gpt2_is_evaluated_on_a_test_set_of_real_dailydialog_questions(dailydialog_testset, tiny_gpt2_dir):
    # given a test set of 40 real questions and a tiny GPT-2 (96 positions: candidates kept to 32 tokens)
    assert dailydialog_testset.items.count() == 40
    call_command(
        "register_system",
        "tiny",
        "--kind",
        "causal",
        "--checkpoint",
        str(tiny_gpt2_dir),
        "--max-candidate-tokens",
        "32",
        "--speaker-tags",
        "--eos-after-candidate",
    )
    # when it is evaluated
    call_command("evaluate", "--testset", "dd-r1", "--system", "tiny", "--device", "cpu", "--batch-questions", "16")
    # then all 160 candidates have finite losses and the summary covers the 40 questions
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    assert CandidateResult.objects.filter(question__evaluation=evaluation).count() == 160
    assert all(0 < loss < 50 for loss in CandidateResult.objects.values_list("loss", flat=True))
    summary = evaluation.summary
    assert summary["questions"] == 40
    assert 0 <= summary["ci95"][0] <= summary["accuracy"] <= summary["ci95"][1] <= 1
    assert summary["per_source"]["imported"]["false_candidates"] == 120
