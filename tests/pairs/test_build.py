"""The build job: pairs from every question, resumable, deterministic for a seed, failures recorded."""

import pytest
from django.core.management import call_command

from core.errors import UserError
from pairs.models import Pair, PairSet, QuestionBuild, Review
from pairs.services import building
from pairs.services.building import pair_set_for_build, pairs_build
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db


def build(name="set-a", *, seed=0, types=("sentence",), per_question=1, **kwargs):
    pair_set = pair_set_for_build(
        dataset_name="chat", set_name=name, types=list(types), criteria=[], per_question=per_question, seed=seed
    )
    return pair_set, pairs_build(pair_set=pair_set, **kwargs)


def incorrect_texts(pair_set) -> list[tuple[str, str]]:
    return sorted(pair_set.pairs.values_list("correct", "incorrect"))


def test_each_edit_becomes_a_pending_pair_with_its_spans(pair_dataset, stand_in_rules):
    pair_set, report = build()
    pairs = list(pair_set.pairs.all())
    assert report["pairs_added"] == len(pairs) == 5  # "Soup, please." is too short for the stand-in
    for pair in pairs:
        assert pair.review == Review.PENDING
        assert pair.incorrect[pair.incorrect_start : pair.incorrect_end] == "WRONG"
        assert pair.correct[: pair.correct_start] == pair.incorrect[: pair.incorrect_start]
        assert pair.correct[pair.correct_end :] == pair.incorrect[pair.incorrect_end :]
        assert pair.question.ground_truth == pair.correct
        assert pair.context == list(pair.question.context.turns.order_by("position").values_list("text", flat=True))


def test_report_counts_each_rule_outcome(pair_dataset, stand_in_rules):
    _, report = build()
    assert report["outcomes"] == {"sentence": {"generated": 5, "too_short": 1}}
    assert report["questions"] == 6


def test_the_same_seed_gives_the_same_pairs_in_another_set(pair_dataset, stand_in_rules):
    first, _ = build("first", seed=3)
    second, _ = build("second", seed=3)
    assert incorrect_texts(first) == incorrect_texts(second)


def test_another_seed_draws_other_words(pair_dataset, stand_in_rules):
    first, _ = build("first", seed=3)
    other, _ = build("other", seed=4)
    assert incorrect_texts(first) != incorrect_texts(other)


def test_pairs_do_not_depend_on_database_ids(pair_dataset, stand_in_rules):
    first, _ = build("first", seed=3)
    QuestionFactory.create_batch(3)  # rows of another dataset first: the copy gets other ids than chat
    for question in pair_dataset.questions.all():
        turns = list(question.context.turns.order_by("position").values_list("text", flat=True))
        QuestionFactory(dataset__name="copy", ground_truth=question.ground_truth, context__turns=turns)
    copy = pair_set_for_build(
        dataset_name="copy", set_name="copy", types=["sentence"], criteria=[], per_question=1, seed=3
    )
    pairs_build(pair_set=copy)
    assert incorrect_texts(first) == incorrect_texts(copy)


def test_per_question_asks_the_rule_for_more_edits(pair_dataset, stand_in_rules):
    pair_set, _ = build(per_question=2)
    assert pair_set.pairs.count() == 10


def test_an_interrupted_build_resumes_where_it_stopped(pair_dataset, stand_in_rules, monkeypatch):
    real = building._build_batch
    calls = []

    def crash_on_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("worker killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(building, "_build_batch", crash_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        build(batch_size=2)
    assert QuestionBuild.objects.count() == 2  # the first batch was committed
    monkeypatch.setattr(building, "_build_batch", real)
    pair_set, report = build(batch_size=2)
    assert report["skipped_finished"] == 2
    assert QuestionBuild.objects.count() == 6
    uninterrupted, _ = build("whole")
    assert incorrect_texts(pair_set) == incorrect_texts(uninterrupted)


def test_a_second_run_of_a_finished_build_adds_nothing(pair_dataset, stand_in_rules):
    build()
    _, report = build()
    assert report["skipped_finished"] == 6 and report["pairs_added"] == 0
    assert Pair.objects.count() == 5


def test_a_failing_rule_is_recorded_and_the_other_questions_go_on(pair_dataset, stand_in_rules):
    pair_set, report = build(types=("sentence", "function"))
    assert report["failed"] == 1
    assert report["outcomes"]["function"] == {"failed": 1, "no_function_word": 5}
    failed = QuestionBuild.objects.get(error__gt="")
    assert "the rule failed" in failed.error
    assert "bank" in failed.question.ground_truth
    assert pair_set.pairs.count() == 5  # the sentence rule's pair of that question is kept


def test_a_failed_question_is_tried_again_on_the_next_run(pair_dataset, stand_in_rules):
    build(types=("sentence", "function"))
    _, report = build(types=("sentence", "function"))
    assert report["skipped_finished"] == 5 and report["failed"] == 1


def test_resuming_with_other_settings_is_refused(pair_dataset, stand_in_rules):
    build(seed=0)
    with pytest.raises(UserError, match="was built with types sentence"):
        build(seed=1)


@pytest.mark.parametrize(
    ("types", "criteria", "per_question", "message"),
    [
        (["nouns"], [], 1, "--types: choose from content, sentence, function"),
        ([], [], 1, "--types"),
        (["content"], ["best"], 1, "--criterion: choose from el, ml"),
        (["sentence"], [], 0, "--per-question must be at least 1"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_created(pair_dataset, types, criteria, per_question, message):
    with pytest.raises(UserError, match=message):
        pair_set_for_build(
            dataset_name="chat", set_name="x", types=types, criteria=criteria, per_question=per_question, seed=0
        )
    assert not PairSet.objects.exists()


def test_content_words_without_a_repository_are_refused(pair_dataset):
    with pytest.raises(UserError, match="need a repository"):
        pair_set_for_build(
            dataset_name="chat", set_name="x", types=["content"], criteria=["el"], per_question=1, seed=0
        )


def test_an_empty_ground_truth_stops_the_build(pair_dataset, stand_in_rules):
    QuestionFactory(dataset=pair_dataset, ground_truth="  ")
    with pytest.raises(UserError, match="empty ground truth"):
        build()
    assert not Pair.objects.exists()


def test_the_command_runs_the_job_and_prints_its_report(pair_dataset, stand_in_rules, capsys):
    call_command("build_pairs", "--dataset", "chat", "--name", "cmd", "--types", "sentence", "--seed", "2")
    out = capsys.readouterr().out
    assert "pairs_added" in out and "5" in out
    assert PairSet.objects.get(name="cmd").build_settings == {
        "types": ["sentence"],
        "criteria": [],
        "per_question": 1,
        "seed": 2,
    }


def test_a_rerun_after_a_failure_does_not_count_the_pairs_it_kept_again(pair_dataset, stand_in_rules):
    build(types=("sentence", "function"))  # the sentence pair of the "bank" question is kept, function failed
    _, report = build(types=("sentence", "function"))
    assert report["pairs_added"] == 0 and report["failed"] == 1
    assert Pair.objects.count() == 5
