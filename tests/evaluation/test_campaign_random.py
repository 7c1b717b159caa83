"""RANDOM trials of a campaign: seeded, resumable, cancellable, ground truths scored once."""

import pytest

from core.errors import UserError
from core.models import Job, JobStatus
from core.services.jobs import job_create, job_execute
from evaluation.baselines import random_trial
from evaluation.job_params import CampaignParams
from evaluation.models import RandomTrialResult
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.selectors_campaign import repository_texts, testset_trial_questions
from evaluation.services.campaigns import campaign_random_run, trial_correct
from evaluation.services.systems import system_register
from tests.evaluation.campaign_helpers import build_repository, build_testset, campaign_with
from tests.evaluation.plugins import LongestWinsPlugin

TRIALS = 12


@pytest.fixture
def testset(db, scored_question):
    return build_testset(scored_question, questions=6)


@pytest.fixture
def repository(db):
    return build_repository()


@pytest.fixture
def longest(db):
    LongestWinsPlugin.reset()
    yield system_register(name="longest", kind="plugin", plugin="tests.evaluation.plugins.LongestWinsPlugin")
    LongestWinsPlugin.reset()
    scorer_cache_clear()


@pytest.fixture
def shortest(db):
    yield system_register(name="shortest", kind="plugin", plugin="tests.evaluation.plugins.ShortestWinsPlugin")
    scorer_cache_clear()


@pytest.fixture
def tiny(db, tiny_gpt2_dir):
    yield system_register(name="tiny", kind="causal", checkpoint=str(tiny_gpt2_dir), max_candidate_tokens=32)
    scorer_cache_clear()


def results(campaign) -> dict[tuple[str, int], int]:
    return {
        (name, trial): correct
        for name, trial, correct in RandomTrialResult.objects.filter(campaign=campaign).values_list(
            "system__name", "trial", "correct"
        )
    }


def test_questions_are_the_testset_items_with_their_ground_truth(testset):
    questions = testset_trial_questions(testset=testset)
    items = list(testset.items.order_by("position"))
    assert [q.id for q in questions] == [str(i.pk) for i in items]
    for question, item in zip(questions, items, strict=True):
        assert question.ground_truth == item.candidates.get(is_ground_truth=True).candidate.text
        assert question.context == tuple(
            item.question.context.turns.order_by("position").values_list("text", flat=True)
        )


def test_every_system_gets_every_trial_scored_once(testset, repository, longest, shortest):
    campaign = campaign_with(systems=[longest, shortest], testset=testset, repository=repository, random_trials=TRIALS)
    report = campaign_random_run(campaign_id=campaign.pk)
    assert report == {"trials": TRIALS, "systems": 2, "scored": 2 * TRIALS, "skipped": 0}
    assert set(results(campaign)) == {(s, t) for s in ("longest", "shortest") for t in range(TRIALS)}
    assert set(RandomTrialResult.objects.values_list("questions", flat=True)) == {6}
    # and the accuracies vary from trial to trial (a distribution, not one number)
    assert len({c for (s, _), c in results(campaign).items() if s == "shortest"}) > 1


def test_a_trial_is_what_random_trial_draws_for_the_campaign_seed(testset, repository, shortest):
    # given the campaign's seed, trial 3 is random_trial(..., seed, trial=3)
    campaign = campaign_with(systems=[shortest], testset=testset, repository=repository, random_trials=4, seed=11)
    campaign_random_run(campaign_id=campaign.pk)
    questions = random_trial(
        testset_trial_questions(testset=testset), repository_texts(repository=repository), k=3, seed=11, trial=3
    )
    expected = sum(min(range(4), key=lambda i: (len(q.candidates[i]), i)) == q.answer_index for q in questions)
    assert results(campaign)[("shortest", 3)] == expected


def test_same_seed_same_results_other_seed_other_draws(testset, repository, shortest):
    runs = []
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        campaign = campaign_with(
            name, systems=[shortest], testset=testset, repository=repository, random_trials=TRIALS, seed=seed
        )
        campaign_random_run(campaign_id=campaign.pk)
        runs.append([c for _, c in sorted(results(campaign).items())])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_a_rerun_scores_only_the_missing_trials(testset, repository, longest):
    # given a finished run
    campaign = campaign_with(systems=[longest], testset=testset, repository=repository, random_trials=TRIALS)
    campaign_random_run(campaign_id=campaign.pk)
    before = results(campaign)
    kept_ids = set(RandomTrialResult.objects.exclude(trial__in=[2, 7]).values_list("id", flat=True))
    # when two trials are deleted and the run starts again
    RandomTrialResult.objects.filter(trial__in=[2, 7]).delete()
    LongestWinsPlugin.reset()
    report = campaign_random_run(campaign_id=campaign.pk)
    # then only those two were scored (plus the ground truths, once), to the same results
    assert (report["scored"], report["skipped"]) == (2, TRIALS - 2)
    assert LongestWinsPlugin.scored == [6, 6 * 3, 6 * 3]
    assert kept_ids <= set(RandomTrialResult.objects.values_list("id", flat=True))
    assert results(campaign) == before


def test_a_finished_run_scores_nothing(testset, repository, longest):
    campaign = campaign_with(systems=[longest], testset=testset, repository=repository, random_trials=3)
    campaign_random_run(campaign_id=campaign.pk)
    LongestWinsPlugin.reset()
    assert campaign_random_run(campaign_id=campaign.pk)["scored"] == 0
    assert LongestWinsPlugin.scored == []


def test_ground_truths_are_scored_once_by_a_plugin_with_independent_losses(testset, repository, longest):
    campaign = campaign_with(systems=[longest], testset=testset, repository=repository, random_trials=TRIALS)
    campaign_random_run(campaign_id=campaign.pk)
    # one call for the 6 ground truths, then 6 x 3 false candidates per trial
    assert LongestWinsPlugin.scored == [6] + [18] * TRIALS


def test_ground_truth_cache_gives_the_accuracies_of_scoring_everything(testset, repository, tiny, longest):
    # given the same trials run with the ground truths scored once, and with every candidate scored
    cached = campaign_with("cached", systems=[tiny, longest], testset=testset, repository=repository, random_trials=8)
    full = campaign_with("full", systems=[tiny, longest], testset=testset, repository=repository, random_trials=8)
    campaign_random_run(campaign_id=cached.pk, cache_ground_truth=True, device="cpu")
    campaign_random_run(campaign_id=full.pk, cache_ground_truth=False, device="cpu")
    # then every trial of every system has the same number of right answers
    assert results(cached) == results(full)
    assert len(results(full)) == 16


def test_cached_ground_truth_is_put_back_at_its_position(testset, repository, tiny):
    # the selection with a cached ground-truth score is the selection over all candidates, tie rule included
    scorer = scorer_for(tiny, device="cpu")
    questions = testset_trial_questions(testset=testset)
    truth = [s[0] for s in scorer.score([q.context for q in questions], [[q.ground_truth] for q in questions])]
    repo = repository_texts(repository=repository)
    for trial in range(5):
        trial_questions = random_trial(questions, repo, k=3, seed=0, trial=trial)
        assert trial_correct(scorer, trial_questions, truth) == trial_correct(scorer, trial_questions)


def test_a_cancelled_run_keeps_its_finished_trials_and_resumes(testset, repository, longest):
    # given a campaign job cancelled while scoring its 4th trial (call 1 scores the ground truths)
    campaign = campaign_with(systems=[longest], testset=testset, repository=repository, random_trials=TRIALS)
    LongestWinsPlugin.cancel_on_call = 5
    job = job_create(params=CampaignParams(campaign_id=campaign.pk, evaluate=False), enqueue=False)
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    # then the job is cancelled with the trials committed before the cancel
    assert job.status == JobStatus.CANCELLED
    assert sorted(t for _, t in results(campaign)) == [0, 1, 2, 3]
    # and a new run finishes the rest
    LongestWinsPlugin.reset()
    job = job_create(params=CampaignParams(campaign_id=campaign.pk, evaluate=False), enqueue=False)
    job_execute(job_id=job.pk)
    assert Job.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED
    assert len(results(campaign)) == TRIALS
    assert len(LongestWinsPlugin.scored) == 1 + TRIALS - 4


@pytest.mark.parametrize("missing", ["testset", "repository"])
def test_random_trials_need_a_test_set_and_a_repository(testset, repository, longest, missing):
    fields = {"testset": testset, "repository": repository, missing: None}
    campaign = campaign_with(systems=[longest], **fields)
    with pytest.raises(UserError, match=missing if missing == "repository" else "no test set"):
        campaign_random_run(campaign_id=campaign.pk)


def test_a_language_model_scores_a_block_of_trials_per_call(testset, repository, tiny, monkeypatch):
    # given a language model's scorer whose calls are recorded
    scorer = scorer_for(tiny, device="cpu")
    calls = []
    score = scorer.score

    def recorded(contexts, candidates, **kwargs):
        calls.append([len(c) for c in candidates])
        return score(contexts, candidates, **kwargs)

    monkeypatch.setattr(scorer, "score", recorded)
    campaign = campaign_with(systems=[tiny], testset=testset, repository=repository, random_trials=8)
    # when its 8 trials (3 false candidates each) are run
    campaign_random_run(campaign_id=campaign.pk, device="cpu")
    # then the ground truths are scored once, then each question once per block of 5 trials
    assert calls == [[1] * 6, [3 * 5] * 6, [3 * 3] * 6]
    assert sorted(t for _, t in results(campaign)) == list(range(8))


def test_blocks_of_trials_give_the_results_of_one_trial_per_call(testset, repository, tiny, monkeypatch):
    # given the same trials run in blocks (the default) and one trial per call
    from evaluation.services import campaigns

    blocks = campaign_with("blocks", systems=[tiny], testset=testset, repository=repository, random_trials=10)
    single = campaign_with("single", systems=[tiny], testset=testset, repository=repository, random_trials=10)
    campaign_random_run(campaign_id=blocks.pk, device="cpu")
    monkeypatch.setattr(campaigns, "FALSE_CANDIDATES_PER_CALL", 1)
    campaign_random_run(campaign_id=single.pk, device="cpu")
    # then every trial has the same number of right answers
    assert results(blocks) == results(single)
    assert len(results(blocks)) == 10
