"""Pair evaluations: a system is correct on a contrastive pair when the correct response gets the
lower loss. Most tests use PairLengthPlugin (loss = length in characters), so which pairs a system
gets right is set by the texts' lengths."""

import itertools

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.errors import UserError
from core.job_registry import job_kind_get
from core.models import Job, JobStatus
from core.services.jobs import job_execute
from evaluation.metrics.accuracy import MIN_PAIRS_TO_RANK
from evaluation.models import EvaluationStatus, PairEvaluation, PairResult
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.services.pair_evaluations import pair_evaluation_start, pair_evaluation_summary
from evaluation.services.systems import system_register
from pairs.models import Pair
from tests.evaluation.plugins import PairLengthPlugin
from tests.factories import PairFactory, PairSetFactory

_serial = itertools.count()


def pair(pair_set, outcome: str = "win", **fields) -> Pair:
    """A pair the length plugin gets right ("win": the correct response is shorter), wrong
    ("lose": longer) or ties on ("tie": the same length)."""
    n = next(_serial)
    short, long = f"I will go, {n:03d}.", f"I will not go, {n:03d}."
    correct, incorrect = {"win": (short, long), "lose": (long, short), "tie": (short, f"I will ga, {n:03d}.")}[outcome]
    return PairFactory(pair_set=pair_set, correct=correct, incorrect=incorrect, **fields)


@pytest.fixture
def length_system(db):
    PairLengthPlugin.reset()
    yield system_register(name="length", kind="plugin", plugin="tests.evaluation.plugins.PairLengthPlugin")
    PairLengthPlugin.reset()
    scorer_cache_clear()


@pytest.fixture
def pair_set(db):
    return PairSetFactory(name="okano")


def run(system_name: str = "length", set_name: str = "okano", **options):
    evaluation, job = pair_evaluation_start(pair_set_name=set_name, system_name=system_name, enqueue=False, **options)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    evaluation.refresh_from_db()
    return evaluation, job


def test_the_job_kind_goes_to_the_gpu_queue():
    assert job_kind_get("evaluate_pairs").queue == "gpu"


def test_each_pair_is_correct_when_its_correct_response_has_the_lower_loss(pair_set, length_system):
    # given a pair the system gets right, one it gets wrong and one where both responses tie
    win, lose, tie = pair(pair_set, "win"), pair(pair_set, "lose"), pair(pair_set, "tie")
    # when it is evaluated
    evaluation, job = run()
    # then both losses of every pair are stored, and only the strictly lower loss counts as correct
    assert job.status == JobStatus.SUCCEEDED, job.error
    results = {r.pair_id: r for r in PairResult.objects.filter(evaluation=evaluation)}
    for p, correct in ((win, True), (lose, False), (tie, False)):
        assert (results[p.pk].correct_loss, results[p.pk].incorrect_loss) == (len(p.correct), len(p.incorrect))
        assert results[p.pk].correct is correct
        assert results[p.pk].correct_sum_logprob is None  # a plugin gives losses only
    assert (evaluation.summary["n"], evaluation.summary["correct"]) == (3, 1)
    assert "sum_logprob_rule" not in evaluation.summary
    # and each pair's two responses were scored in one question of one call, correct response first
    assert PairLengthPlugin.calls == [[[p.correct, p.incorrect] for p in (win, lose, tie)]]


def test_only_accepted_pairs_not_dropped_by_the_annotators_are_evaluated(pair_set, length_system):
    # given two counted pairs (one never sent to annotators, one kept by them) and five that do not count
    counted = [pair(pair_set, "win"), pair(pair_set, "lose", annotator_verdict="kept")]
    pair(pair_set, review="pending")
    pair(pair_set, review="rejected")
    pair(pair_set, annotator_verdict="undecided")
    pair(pair_set, annotator_verdict="acceptable")
    pair(pair_set, annotator_verdict="ground_truth_rejected")
    # when the system is evaluated
    evaluation, _ = run()
    # then only the counted pairs have results, and the summary says how many pairs were left aside
    assert set(PairResult.objects.values_list("pair_id", flat=True)) == {p.pk for p in counted}
    assert (evaluation.summary["n"], evaluation.summary["correct"]) == (2, 1)
    assert evaluation.summary["pair_set_counts"] == {
        "counted": 2,
        "pending_review": 1,
        "awaiting_annotators": 1,
        "left_out": 3,
    }


def test_a_set_without_accepted_pairs_is_refused(pair_set, length_system):
    pair(pair_set, review="pending")
    pair(pair_set, review="pending")
    with pytest.raises(UserError, match="no accepted pair.*2 pending review"):
        pair_evaluation_start(pair_set_name="okano", system_name="length", enqueue=False)
    assert not PairEvaluation.objects.exists()


def test_unknown_set_or_system_is_refused(pair_set, length_system):
    with pytest.raises(UserError, match="no pair set 'nope'"):
        pair_evaluation_start(pair_set_name="nope", system_name="length")
    with pytest.raises(UserError, match="no system 'nope'"):
        pair_evaluation_start(pair_set_name="okano", system_name="nope")


def test_summary_per_type_subtype_and_criterion_matches_a_hand_count(pair_set, length_system):
    # given pairs of three types, some with subtypes and criteria, and two pairs that do not count
    for outcome, fields in [
        ("win", {"subtype": "noun", "criterion": "el"}),
        ("win", {"subtype": "noun", "criterion": "el"}),
        ("lose", {"subtype": "noun", "criterion": "el"}),
        ("win", {"subtype": "noun", "criterion": "ml"}),
        ("lose", {"subtype": "verb", "criterion": "el"}),
        ("win", {"type": "sentence", "subtype": "negation"}),
        ("lose", {"type": "sentence", "subtype": "negation"}),
        ("win", {"type": "function"}),
        ("win", {"type": "function", "review": "pending"}),
        ("lose", {"type": "sentence", "review": "rejected"}),
    ]:
        pair(pair_set, outcome, **fields)
    # when the system is evaluated
    summary = run()[0].summary
    # then every group counts its pairs by hand: 5 of the 8 counted pairs are right
    counts = lambda part: {k: (c["n"], c["correct"]) for k, c in summary[part].items()}  # noqa: E731
    assert (summary["n"], summary["correct"], summary["accuracy"]) == (8, 5, 5 / 8)
    assert counts("per_type") == {"content": (5, 3), "sentence": (2, 1), "function": (1, 1)}
    assert counts("per_subtype") == {"content/noun": (4, 3), "content/verb": (1, 0), "sentence/negation": (2, 1)}
    assert counts("per_criterion") == {"el": (4, 2), "ml": (1, 1)}
    # and each cell has its accuracy inside its bootstrap 95 % interval
    assert summary["per_type"]["content"]["accuracy"] == 3 / 5
    assert summary["per_type"]["function"]["ci95"] == [1.0, 1.0]
    for part in ("per_type", "per_subtype", "per_criterion"):
        for cell in summary[part].values():
            low, high = cell["ci95"]
            assert 0 <= low <= cell["accuracy"] <= high <= 1


def test_a_failed_run_resumes_without_rescoring_finished_pairs(pair_set, length_system):
    # given a run of one pair per batch that fails on its third batch
    pairs = [pair(pair_set, outcome) for outcome in ("win", "lose", "win", "win", "lose")]
    PairLengthPlugin.fail_on_call = 3
    evaluation, job = run(batch_pairs=1)
    assert (job.status, evaluation.status) == (JobStatus.FAILED, EvaluationStatus.FAILED)
    assert "scripted failure" in evaluation.error
    first = set(PairResult.objects.values_list("id", "pair_id"))
    assert {p for _, p in first} == {pairs[0].pk, pairs[1].pk}
    # when it runs again
    PairLengthPlugin.fail_on_call = None
    evaluation, job = run(batch_pairs=1)
    # then only the three pairs without a result were scored, and the first two kept their rows
    assert job.status == JobStatus.SUCCEEDED
    assert [call[0][0] for call in PairLengthPlugin.calls[3:]] == [p.correct for p in pairs[2:]]
    assert first <= set(PairResult.objects.values_list("id", "pair_id"))
    assert PairResult.objects.count() == 5
    assert (evaluation.summary["n"], evaluation.summary["correct"]) == (5, 3)


def test_a_cancelled_run_keeps_its_finished_batches(pair_set, length_system):
    # given a researcher who cancels the job while its first batch of two pairs is scored
    for _ in range(5):
        pair(pair_set)
    PairLengthPlugin.cancel_on_call = 1
    # when the job runs
    evaluation, job = run(batch_pairs=2)
    # then it stops after that batch, which stays saved
    assert (job.status, evaluation.status) == (JobStatus.CANCELLED, EvaluationStatus.CANCELLED)
    assert PairResult.objects.count() == 2
    assert len(PairLengthPlugin.calls) == 1


def test_a_finished_evaluation_is_returned_as_is(pair_set, length_system):
    # given a finished evaluation
    pair(pair_set)
    pair(pair_set, "lose")
    finished, _ = run()
    # when it is started again
    evaluation, job = pair_evaluation_start(pair_set_name="okano", system_name="length", enqueue=False)
    # then there is no new job, no new scoring and no duplicated row
    assert job is None and evaluation.pk == finished.pk and evaluation.status == EvaluationStatus.SUCCEEDED
    assert len(PairLengthPlugin.calls) == 1
    assert Job.objects.filter(kind="evaluate_pairs").count() == 1
    assert (PairEvaluation.objects.count(), PairResult.objects.count()) == (1, 2)


def test_pairs_accepted_after_a_run_are_scored_by_running_again(pair_set, length_system):
    # given a finished evaluation, then a reviewer who accepts a pair that was pending
    pair(pair_set, "win")
    later = pair(pair_set, "lose", review="pending")
    run()
    Pair.objects.filter(pk=later.pk).update(review="accepted")
    # when the evaluation is started again
    evaluation, job = run()
    # then a new job scores that pair alone, and the summary counts it
    assert job.status == JobStatus.SUCCEEDED
    assert PairLengthPlugin.calls[1] == [[later.correct, later.incorrect]]
    assert (evaluation.summary["n"], evaluation.summary["correct"]) == (2, 1)


def test_a_pair_dropped_after_a_run_leaves_the_summary_without_a_new_job(pair_set, length_system):
    # given a finished evaluation of two pairs, then annotators who find one incorrect response acceptable
    pair(pair_set, "win")
    dropped = pair(pair_set, "lose")
    run()
    Pair.objects.filter(pk=dropped.pk).update(annotator_verdict="acceptable")
    # when it is started again
    evaluation, job = pair_evaluation_start(pair_set_name="okano", system_name="length", enqueue=False)
    # then nothing is scored, and the stored summary no longer counts that pair
    assert job is None
    evaluation.refresh_from_db()
    assert (evaluation.summary["n"], evaluation.summary["correct"]) == (1, 1)


def test_results_of_an_edited_system_are_discarded(pair_set, length_system):
    # given a finished evaluation
    pair(pair_set)
    run()
    old = set(PairResult.objects.values_list("id", flat=True))
    # when the system is edited and evaluated again
    system_register(name="length", kind="plugin", plugin="tests.evaluation.plugins.PairLengthPlugin", dtype="float32")
    evaluation, job = run()
    # then the pair was scored again, into a new row
    assert job.status == JobStatus.SUCCEEDED
    assert len(PairLengthPlugin.calls) == 2
    new = set(PairResult.objects.values_list("id", flat=True))
    assert len(new) == 1 and not (old & new)


def test_summary_takes_the_same_queries_whatever_the_number_of_pairs(
    pair_set, length_system, django_assert_num_queries
):
    # given evaluations of 3 and of 12 pairs
    pair(pair_set)
    pair(pair_set, "lose")
    pair(pair_set, "tie")
    small, _ = run()
    other = PairSetFactory(name="bigger")
    for outcome in ("win", "lose", "tie") * 4:
        pair(other, outcome, type="sentence", subtype=f"s{next(_serial) % 3}", criterion="el")
    big, _ = run(set_name="bigger")
    # when each is summarised (the evaluation with its system and set in hand)
    for evaluation in (small, big):
        evaluation = PairEvaluation.objects.select_related("system", "pair_set").get(pk=evaluation.pk)
        # then it reads the results and the set's counts: two queries
        with django_assert_num_queries(2):
            summary = pair_evaluation_summary(evaluation=evaluation)
        assert summary["n"] == Pair.objects.filter(pair_set=evaluation.pair_set).count()


def test_a_language_model_gives_both_rules_and_scores_each_response_as_alone(pair_set, gpt_system):
    # given three pairs and the tiny GPT-2
    pairs = [pair(pair_set, outcome) for outcome in ("win", "lose", "tie")]
    # when it is evaluated on the CPU
    evaluation, job = run(system_name="gpt", device="cpu")
    assert job.status == JobStatus.SUCCEEDED, job.error
    # then each response's loss is the one it gets scored alone with its context
    scorer = scorer_for(gpt_system, device="cpu")
    results = {r.pair_id: r for r in PairResult.objects.all()}
    for p in pairs:
        alone = scorer.score([p.context, p.context], [[p.correct], [p.incorrect]])
        result = results[p.pk]
        assert result.correct_loss == pytest.approx(alone[0][0].loss, abs=1e-4)
        assert result.incorrect_loss == pytest.approx(alone[1][0].loss, abs=1e-4)
        assert result.correct_sum_logprob == pytest.approx(alone[0][0].sum_logprob, abs=1e-3)
        assert result.n_tokens == alone[0][0].n_tokens > 0
        assert result.correct is (result.correct_loss < result.incorrect_loss)
    # and the summary has the summed log-prob rule too
    by_sum = sum(r.correct_sum_logprob > r.incorrect_sum_logprob for r in results.values())
    assert evaluation.summary["sum_logprob_rule"]["correct"] == by_sum
    assert evaluation.summary["sum_logprob_rule"]["n"] == 3


def test_command_prints_the_summary_table(pair_set, length_system, capsys):
    # given pairs of two types
    pair(pair_set, "win", subtype="noun", criterion="el")
    pair(pair_set, "lose", subtype="noun", criterion="el")
    pair(pair_set, "win", type="function")
    pair(pair_set, review="pending")
    # when the command evaluates the system
    call_command("evaluate_pairs", "--set", "okano", "--system", "length", "--device", "cpu")
    out = capsys.readouterr().out
    # then it prints a line per group: pairs, correct, accuracy and 95 % CI
    lines = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()[2:]}
    assert lines["all pairs"][2:5] == ["3", "2", "0.667"]
    assert lines["type content"][2:5] == ["2", "1", "0.500"]
    assert lines["type function"][2:7] == ["1", "1", "1.000", "[1.000,", "1.000]"]
    assert lines["type/subtype content/noun"][2:4] == ["2", "1"]
    assert lines["criterion el"][2:4] == ["2", "1"]
    assert "1 pairs pending review" in out
    # and a second call prints the stored summary without scoring again
    call_command("evaluate_pairs", "--set", "okano", "--system", "length")
    assert capsys.readouterr().out == out
    assert len(PairLengthPlugin.calls) == 1


def test_command_reports_an_unknown_set(db):
    with pytest.raises(CommandError, match="no pair set 'nope'"):
        call_command("evaluate_pairs", "--set", "nope", "--system", "x")


def test_each_group_has_its_chance_and_groups_below_the_bar_are_too_few_to_rank(pair_set, length_system, capsys):
    # given 30 content pairs (ML) and one function pair
    for k in range(MIN_PAIRS_TO_RANK):
        pair(pair_set, "win" if k % 2 else "lose", subtype="noun", criterion="ml")
    pair(pair_set, "win", type="function")
    call_command("evaluate_pairs", "--set", "okano", "--system", "length", "--device", "cpu")
    out = capsys.readouterr().out
    summary = PairEvaluation.objects.get().summary
    # then every cell has n, its interval and chance, and only the small one is too few to rank
    assert summary["per_type"]["content"]["n"] == MIN_PAIRS_TO_RANK
    assert summary["per_type"]["content"]["chance"] == 0.5 and not summary["per_type"]["content"]["too_few_to_rank"]
    assert summary["per_type"]["function"]["too_few_to_rank"]
    lines = {line.split("  ")[0].strip(): line for line in out.splitlines()[2:]}
    assert "(chance 0.500)" in out.splitlines()[1]
    assert lines["type function"].endswith(f"too few to rank (< {MIN_PAIRS_TO_RANK} pairs)")
    assert "too few" not in lines["type content"]
    # and the ML pairs are explained where they are shown
    assert "criterion ML: ML pairs replace a content word" in out
