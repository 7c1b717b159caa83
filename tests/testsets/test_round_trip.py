"""Real data end to end: DailyDialog -> questions -> scored test set -> filter -> build ->
export -> re-import -> the same questions and scores."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Dataset, Question, Score
from core.text import text_hash

pytestmark = [pytest.mark.shared_data, pytest.mark.slow, pytest.mark.heavy]


def questions_of(dataset: Dataset) -> list[tuple]:
    """(context, ground truth, false candidates, scores per response) for each question, in order."""
    scores: dict[int, list[int]] = {}
    for candidate_id, value in (
        Score.objects.filter(candidate__question__dataset=dataset)
        .order_by("candidate_id", "annotator_id")
        .values_list("candidate_id", "value")
    ):
        scores.setdefault(candidate_id, []).append(value)
    result = []
    for question in (
        Question.objects.filter(dataset=dataset).prefetch_related("context__turns", "candidates").order_by("id")
    ):
        candidates = sorted(question.candidates.all(), key=lambda c: (not c.is_ground_truth, c.pk))
        result.append(
            (
                [t.text for t in question.context.turns.all()],
                question.ground_truth,
                [c.text for c in candidates[1:]],
                [scores.get(c.pk, []) for c in candidates],
            )
        )
    return result


def test_dailydialog_to_test_set_and_back(db, shared_data, tmp_path):
    out = StringIO()
    # given the DailyDialog test split imported as questions with 3-turn contexts
    call_command(
        "import_dialogues",
        shared_data / "dailydialog/test/dialogues_test.txt",
        format="dailydialog",
        dataset="dd-test",
        stdout=out,
    )
    dd = questions_of(Dataset.objects.get(name="dd-test"))
    assert len(dd) == 918 and all(len(context) == 3 for context, *_ in dd)

    # and a scored test set over those contexts: false candidates are other dialogues' responses,
    # scores are Sato et al.'s released human scores (line by line)
    human = (shared_data / "human_annotated/eval-via-selection/human_scores.jsonl").read_text().splitlines()
    tsv_lines = []
    for i, (context, gt, _, _) in enumerate(dd):
        false, seen = [], {text_hash(gt)}
        for j in range(i + 1, i + len(dd)):
            other = dd[j % len(dd)][1]
            if text_hash(other) not in seen:
                seen.add(text_hash(other))
                false.append(other)
            if len(false) == 3:
                break
        tsv_lines.append("\t".join([*context, gt, *false]))
    (tmp_path / "scored.tsv").write_text("\n".join(tsv_lines) + "\n")
    (tmp_path / "scores.jsonl").write_text("\n".join(human[: len(dd)]) + "\n")
    call_command(
        "import_testset", tmp_path / "scored.tsv", scores=tmp_path / "scores.jsonl", dataset="scored", stdout=out
    )

    # when it is filtered, built, exported and the export re-imported
    preview_out = StringIO()
    call_command("filter_preview", dataset="scored", json=True, stdout=preview_out)
    preview = json.loads(preview_out.getvalue())
    call_command("build_testset", dataset="scored", name="rt-1", seed=11, stdout=out)
    call_command("export_testset", "rt-1", out=tmp_path / "export", stdout=out)
    call_command(
        "import_testset",
        tmp_path / "export/rt-1.tsv",
        scores=tmp_path / "export/rt-1.human_scores.jsonl",
        dataset="reimported",
        stdout=out,
    )

    # then the re-imported questions are the test set's (every question passed, so in the
    # same order), with identical texts and scores
    scored = questions_of(Dataset.objects.get(name="scored"))
    reimported = questions_of(Dataset.objects.get(name="reimported"))
    assert len(reimported) == preview["buildable_questions"] == len(scored) == 918
    for (context, gt, false, scores), (o_context, o_gt, o_false, o_scores) in zip(reimported, scored, strict=True):
        assert (context, gt, scores[0]) == (o_context, o_gt, o_scores[0])
        # the same false candidates with the same scores each (the test set shuffles their order)
        assert sorted(zip(false, scores[1:], strict=True)) == sorted(zip(o_false, o_scores[1:], strict=True))
