"""The selection-accuracy job: a system on a test set built by the test-set services."""

import json

import pytest
from django.core.management import call_command

from annotation.models import Score
from core.models import Job, JobStatus
from core.services.jobs import job_execute
from evaluation.models import CandidateResult, Evaluation, EvaluationStatus, QuestionResult
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.services.evaluations import evaluation_start
from evaluation.services.systems import system_register
from tests.evaluation.plugins import ScriptedPlugin
from testsets.models import TestSetQuestion


@pytest.fixture
def scripted(db):
    ScriptedPlugin.reset()
    yield system_register(name="scripted", kind="plugin", plugin="tests.evaluation.plugins.ScriptedPlugin")
    ScriptedPlugin.reset()
    scorer_cache_clear()


def run(evaluation_name_pair, **options):
    evaluation, job = evaluation_start(
        testset_name=evaluation_name_pair[0], system_name=evaluation_name_pair[1], enqueue=False, **options
    )
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    evaluation.refresh_from_db()
    return evaluation, job


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_commands_register_a_checkpoint_and_evaluate_it_on_the_cpu(kind, testset, tiny_gpt2_dir, tiny_bart_dir, capsys):
    # given a tiny GPT-2 or BART registered from its local directory
    folder = tiny_gpt2_dir if kind == "causal" else tiny_bart_dir
    call_command("register_system", "tiny", "--kind", kind, "--checkpoint", str(folder))
    capsys.readouterr()
    # when it is evaluated on the test set
    call_command("evaluate", "--testset", "r1", "--system", "tiny", "--device", "cpu")
    report = json.loads(capsys.readouterr().out)
    # then every question has a selection: the candidate with the lowest loss
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    results = list(QuestionResult.objects.filter(evaluation=evaluation).prefetch_related("candidates__candidate"))
    assert len(results) == 4
    for result in results:
        candidates = sorted(result.candidates.all(), key=lambda c: c.loss)
        assert len(candidates) == 4 and all(c.n_tokens > 0 for c in candidates)
        assert result.selected_position == candidates[0].candidate.position
        assert result.correct == candidates[0].candidate.is_ground_truth
    # and the report gives the accuracy with its bootstrap interval
    correct = sum(r.correct for r in results)
    assert report["accuracy"] == pytest.approx(correct / 4)
    assert report["ci95"][0] <= report["accuracy"] <= report["ci95"][1]
    assert report["sum_logprob_rule"]["questions"] == 4


def test_evaluate_takes_the_test_set_as_release_too(testset, scripted, capsys):
    # when the command names the test set with the older option
    call_command("evaluate", "--release", "r1", "--system", "scripted", "--device", "cpu")
    # then the system is evaluated on that test set
    evaluation = Evaluation.objects.get()
    assert (evaluation.testset, evaluation.status) == (testset, EvaluationStatus.SUCCEEDED)
    assert json.loads(capsys.readouterr().out)["accuracy"] == 0.5


def test_accuracy_per_source_and_per_error_label(testset, scripted):
    # given annotators who labelled the dense false candidates "off-topic"
    Score.objects.filter(candidate__source="dense").update(labels=["off-topic"])
    # when a system that prefers dense candidates to the ground truth is evaluated
    evaluation, job = run(("r1", "scripted"))
    # then it fails exactly the two questions with a dense candidate
    summary = evaluation.summary
    assert (summary["questions"], summary["correct"], summary["accuracy"]) == (4, 2, 0.5)
    # and the ground truth beats every lexical candidate but no dense one
    assert summary["per_source"]["lexical"]["accuracy"] == 1.0
    assert summary["per_source"]["lexical"]["false_candidates"] == 10
    assert summary["per_source"]["dense"] == {
        "false_candidates": 2,
        "ground_truth_preferred": 0,
        "accuracy": 0.0,
        "ci95": [0.0, 0.0],
    }
    assert summary["per_label"] == {"off-topic": summary["per_source"]["dense"]}
    assert "sum_logprob_rule" not in summary  # a plugin gives losses only
    assert job.result == summary


def test_a_failed_run_resumes_without_recomputing_finished_questions(testset, scripted):
    # given a run that fails on its second batch of one question
    ScriptedPlugin.fail_on_call = 2
    evaluation, job = run(("r1", "scripted"), batch_questions=1)
    assert (job.status, evaluation.status) == (JobStatus.FAILED, EvaluationStatus.FAILED)
    first = list(QuestionResult.objects.values_list("id", "item_id"))
    assert len(first) == 1
    # when it runs again
    ScriptedPlugin.fail_on_call = None
    evaluation, job = run(("r1", "scripted"), batch_questions=1)
    # then only the three unfinished questions were scored, and nothing is duplicated
    assert job.status == JobStatus.SUCCEEDED
    assert len(ScriptedPlugin.calls) == 2 + 3
    assert set(first) <= set(QuestionResult.objects.values_list("id", "item_id"))
    assert QuestionResult.objects.count() == 4
    assert CandidateResult.objects.count() == 16


def test_a_cancelled_run_keeps_its_finished_batches(testset, scripted):
    # given a researcher who cancels the job while its first batch is scored
    ScriptedPlugin.cancel_on_call = 1
    # when the job runs in batches of two questions
    evaluation, job = run(("r1", "scripted"), batch_questions=2)
    # then it stops after that batch, which stays saved
    assert (job.status, evaluation.status) == (JobStatus.CANCELLED, EvaluationStatus.CANCELLED)
    assert QuestionResult.objects.count() == 2
    assert len(ScriptedPlugin.calls) == 1


def test_a_finished_evaluation_is_not_run_again(testset, scripted):
    run(("r1", "scripted"))
    evaluation, job = evaluation_start(testset_name="r1", system_name="scripted", enqueue=False)
    assert job is None and evaluation.status == EvaluationStatus.SUCCEEDED


def test_results_of_an_edited_system_are_discarded(testset, scripted):
    # given a finished evaluation
    run(("r1", "scripted"))
    old = set(QuestionResult.objects.values_list("id", flat=True))
    # when the system is edited and evaluated again
    system_register(name="scripted", kind="plugin", plugin="tests.evaluation.plugins.ScriptedPlugin", dtype="float32")
    evaluation, job = run(("r1", "scripted"))
    # then every question was scored anew
    assert job.status == JobStatus.SUCCEEDED
    assert old.isdisjoint(QuestionResult.objects.values_list("id", flat=True))
    assert QuestionResult.objects.count() == TestSetQuestion.objects.count() == 4


def test_evaluation_jobs_go_to_the_gpu_queue(
    testset, scripted, settings, sent_tasks, django_capture_on_commit_callbacks
):
    # given a GPU queue of its own name (sent_tasks records where each job is sent)
    settings.WELLCHOSEN_GPU_QUEUE = "gpu-big"
    # when an evaluation is started
    with django_capture_on_commit_callbacks(execute=True):
        _, job = evaluation_start(testset_name="r1", system_name="scripted")
    # then its job is sent to the GPU queue once the transaction commits
    assert sent_tasks == [("core.tasks.run_job", "gpu-big", [job.pk])] and job.kind == "evaluate"


def test_the_celery_task_runs_the_evaluation(testset, scripted, django_capture_on_commit_callbacks):
    # given an eager Celery (test settings)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation, job = evaluation_start(testset_name="r1", system_name="scripted")
    # then the task ran the job to the end
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    assert Evaluation.objects.get(pk=evaluation.pk).summary["questions"] == 4


def test_a_worker_keeps_a_loaded_system_until_it_is_edited(scripted):
    # given a system scorer loaded once
    first = scorer_for(scripted)
    # then it is reused, and reloaded after an edit
    assert scorer_for(scripted) is first
    edited = system_register(
        name="scripted", kind="plugin", plugin="tests.evaluation.plugins.ScriptedPlugin", description="edited"
    )
    assert scorer_for(edited) is not first
