"""Running an evaluation campaign: CHOSEN evaluations, pair evaluations, RANDOM trials, then the report.

RANDOM (Sato et al. 2020, §4.2): the test set's questions with their false candidates drawn anew from
the campaign's repository, ``random_trials`` seeded trials (:func:`evaluation.baselines.random_trial`,
trial ``t`` seeded with ``(campaign.seed, t)``: the same sets whatever the number of trials). Each
system scores each trial; one :class:`RandomTrialResult` row per (campaign, system, trial), committed
trial by trial, so a failed or cancelled run resumes where it stopped and a finished trial is never
scored again. In the campaign's job the trials run in shards (one system, a block of consecutive
trials: :mod:`evaluation.services.campaign_shards`) that every worker on the job's queue takes.

The ground truth's loss does not depend on the trial: a language model scores each candidate
given the context alone, so it is scored once per question and only the false candidates are
scored in each trial (a quarter less work with 3 false candidates). A language model also scores
a block of trials in one call, each question with the false candidates of every trial of the
block (up to ``FALSE_CANDIDATES_PER_CALL``), so that its context is encoded once per block rather
than once per trial; the block's results are committed together. Plugins score all candidates of
every trial, a trial per call: a plugin may look at the whole call (the TF-IDF baseline fits IDF on
the texts it is given), unless its class says ``losses_are_independent = True``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from django.db import transaction

from core.errors import JobCancelled, UserError
from core.models import Job
from core.services.job_shards import job_shards_run
from core.services.jobs import JobProgress, job_create, job_execute
from evaluation.baselines import TrialQuestion, random_trial
from evaluation.job_params import CampaignParams
from evaluation.models import Campaign, RandomTrialResult
from evaluation.scoring import CandidateScore, select
from evaluation.scoring.backends import backend_for, scoring_kinds
from evaluation.scoring.loading import scorer_for
from evaluation.selectors_campaign import repository_texts, testset_trial_questions

from .campaign_report import campaign_report_refresh
from .campaign_shards import trial_reports_merge, trial_shard_size, trial_shards_plan
from .evaluations import evaluation_start
from .pair_evaluations import pair_evaluation_start

# A language model scores each question once per block of trials with up to this many false
# candidates (5 trials of 3): the context's share of the work drops from about half to a sixth
# (DailyDialog: 46-token contexts, 15-token candidates), while packed rows stay short enough
# (about 270 tokens) for attention to remain a small part of the cost.
FALSE_CANDIDATES_PER_CALL = 16


def campaign_start(
    *,
    campaign: Campaign,
    created_by=None,
    enqueue: bool = True,
    evaluate: bool = CampaignParams.default("evaluate"),
    device: str | None = None,
) -> Job:
    """The campaign's job (CAMPAIGN kind, gpu queue): a queued or running one is returned as is."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update(of=("self",)).select_related("job").get(pk=campaign.pk)
        if campaign.job is not None and not campaign.job.is_finished:
            return campaign.job
        job = job_create(
            params=CampaignParams(campaign_id=campaign.pk, evaluate=evaluate, device=device),
            created_by=created_by,
            enqueue=enqueue,
        )
        Campaign.objects.filter(pk=campaign.pk).update(job=job)
    return job


def campaign_run(
    *,
    campaign_id: int,
    progress: JobProgress | None = None,
    evaluate: bool = CampaignParams.default("evaluate"),
    device: str | None = None,
    job: Job | None = None,
) -> dict:
    """Evaluate every local system on the test set (CHOSEN) and on the pair set (finished evaluations
    are kept), run the RANDOM trials still missing, then compute and store the report. Parts a
    campaign lacks (no test set, no pair set, no repository, no local system) are skipped; the
    report says what is missing. With its ``job``, the RANDOM trials run in shards of that job.
    """
    campaign = Campaign.objects.select_related("testset", "repository", "pair_set").filter(pk=campaign_id).first()
    if campaign is None:
        raise UserError(f"no campaign #{campaign_id}")
    local = list(campaign.systems.filter(kind__in=scoring_kinds()).order_by("name"))
    # the evaluations' own jobs were asked for by whoever started the campaign
    created_by = job.created_by if job is not None else None
    if evaluate:
        for system in local:
            if campaign.testset is not None:
                _, inner = evaluation_start(
                    testset_name=campaign.testset.name,
                    system_name=system.name,
                    enqueue=False,
                    device=device,
                    created_by=created_by,
                )
                _execute_inside(inner, progress=progress)
            if campaign.pair_set is not None:
                try:
                    _, inner = pair_evaluation_start(
                        pair_set_name=campaign.pair_set.name,
                        system_name=system.name,
                        enqueue=False,
                        device=device,
                        created_by=created_by,
                    )
                except UserError:
                    continue  # no accepted pair yet: the report says so
                _execute_inside(inner, progress=progress)
    random = None
    if campaign.testset is not None and campaign.repository is not None and local:
        random = campaign_random_run(campaign_id=campaign.pk, progress=progress, device=device, job=job)
    report = campaign_report_refresh(campaign=campaign)
    return {
        "campaign": campaign.name,
        "systems": len(report["leaderboard"]),
        "random": random,
        "report_at": report["computed_at"],
        "notes": report["notes"],
    }


def _execute_inside(job: Job | None, *, progress: JobProgress | None) -> None:
    """Run an evaluation's job inside the campaign's (None: the evaluation is finished already)."""
    if job is None:
        return
    # job_execute records the outcome on the evaluation's own job; a live worker holding it is left
    # alone. Its progress reaches the campaign job too, and a cancel of either one stops it.
    job_execute(job_id=job.pk, parent=progress)
    if progress and progress.cancel_requested():
        raise JobCancelled()  # the evaluation stopped because the campaign job was cancelled


def campaign_random_run(
    *,
    campaign_id: int,
    progress: JobProgress | None = None,
    device: str | None = None,
    cache_ground_truth: bool | None = None,
    job: Job | None = None,
) -> dict:
    """Score every missing RANDOM trial of every local system of the campaign (see the module docstring).

    With the campaign's ``job`` (and its progress), the trials are scored in shards of one system
    and a block of trials that any worker on the job's queue may run (campaign_trials_shard_score);
    without, here in one piece. ``cache_ground_truth``: score the ground truth once per question
    (default: for language models). Returns ``{"trials": per system, "systems": local systems,
    "scored": trials scored now, "skipped": trials already done}``.
    """
    campaign = _random_campaign(campaign_id)
    systems = list(campaign.systems.filter(kind__in=scoring_kinds()).order_by("name"))
    if job is not None and progress is not None:
        size = trial_shard_size(per_call=trials_per_call(campaign.testset.false_per_question))
        reports = job_shards_run(
            job=job,
            progress=progress,
            plan=lambda: trial_shards_plan(systems=systems, trials=campaign.random_trials, size=size),
            phase="RANDOM trials",
            unit="trials",
        )
        return trial_reports_merge(reports, trials=campaign.random_trials, systems=len(systems))
    done: dict[int, set[int]] = defaultdict(set)
    for system_id, trial in RandomTrialResult.objects.filter(campaign=campaign).values_list("system_id", "trial"):
        done[system_id].add(trial)
    pending = {s.pk: [t for t in range(campaign.random_trials) if t not in done[s.pk]] for s in systems}
    total = len(systems) * campaign.random_trials
    finished = total - sum(len(p) for p in pending.values())
    result = {"trials": campaign.random_trials, "systems": len(systems), "scored": 0, "skipped": finished}
    if progress:
        progress.update(done=finished, total=total, force=True, phase="RANDOM trials", unit="trials")
    if not finished < total:
        return result
    questions, repository = _trial_inputs(campaign)

    def scored(block: int) -> None:
        nonlocal finished
        finished += block
        result["scored"] += block
        if progress:  # every block: a cancel stops the run between two committed blocks
            progress.update(done=finished, total=total, force=True)

    for system in systems:
        if pending[system.pk]:
            _system_trials_score(
                campaign,
                system,
                pending[system.pk],
                questions=questions,
                repository=repository,
                device=device,
                cache_ground_truth=cache_ground_truth,
                on_block=scored,
            )
    return result


def campaign_trials_shard_score(
    *, campaign_id: int, system_id: int, first_trial: int, last_trial: int, device: str | None = None, progress=None
) -> dict:
    """One shard of a campaign job's RANDOM trials: score the system's trials ``first_trial`` to
    ``last_trial`` that have no result yet (those done are skipped). Returns its counts."""
    campaign = _random_campaign(campaign_id)
    system = campaign.systems.filter(pk=system_id).first()
    if system is None:
        raise UserError(f"campaign {campaign.name}: system #{system_id} is no longer one of its systems")
    block = range(first_trial, last_trial + 1)
    done = set(
        RandomTrialResult.objects.filter(campaign=campaign, system=system, trial__in=block).values_list(
            "trial", flat=True
        )
    )
    pending = [t for t in block if t not in done]
    result = {"scored": 0, "skipped": len(done)}
    if progress:
        progress.update(done=len(done), total=len(block), force=True, phase="RANDOM trials", unit="trials")
    if not pending:
        return result
    questions, repository = _trial_inputs(campaign)

    def scored(trials: int) -> None:
        result["scored"] += trials
        if progress:
            progress.update(done=len(done) + result["scored"], total=len(block), force=True)

    _system_trials_score(
        campaign, system, pending, questions=questions, repository=repository, device=device, on_block=scored
    )
    return result


def trials_per_call(false_per_question: int) -> int:
    """Trials a language model scores in one call (each question with their false candidates)."""
    return max(1, FALSE_CANDIDATES_PER_CALL // false_per_question)


def _random_campaign(campaign_id: int) -> Campaign:
    campaign = Campaign.objects.select_related("testset", "repository").filter(pk=campaign_id).first()
    if campaign is None:
        raise UserError(f"no campaign #{campaign_id}")
    if campaign.testset is None:
        raise UserError(f"campaign {campaign.name}: no test set whose questions the RANDOM trials ask")
    if campaign.repository is None:
        raise UserError(f"campaign {campaign.name}: no repository to draw RANDOM false candidates from")
    return campaign


def _trial_inputs(campaign: Campaign) -> tuple[list, list[str]]:
    """The test set's questions and the repository's texts that every trial draws from."""
    questions = testset_trial_questions(testset=campaign.testset)
    if not questions:
        raise UserError(f"test set {campaign.testset.name} has no questions")
    repository = repository_texts(repository=campaign.repository)
    if not repository:
        raise UserError(f"repository {campaign.repository.name} has no utterances")
    return questions, repository


def _system_trials_score(
    campaign: Campaign,
    system,
    trials: list[int],
    *,
    questions: list,
    repository: list[str],
    device: str | None,
    on_block: Callable[[int], None],
    cache_ground_truth: bool | None = None,
) -> None:
    """Score ``trials`` of one system, a block of trials per call, each block committed, then
    ``on_block(trials in it)``."""
    k = campaign.testset.false_per_question
    scorer = scorer_for(system, device=device)
    cache = cache_ground_truth
    if cache is None:
        cache = backend_for(system).losses_are_independent(scorer)
    truth = scorer.score([q.context for q in questions], [[q.ground_truth] for q in questions]) if cache else None
    per_call = trials_per_call(k) if truth and getattr(scorer, "shares_context", False) else 1
    for start in range(0, len(trials), per_call):
        block = trials[start : start + per_call]
        drawn = [random_trial(questions, repository, k=k, seed=campaign.seed, trial=t) for t in block]
        if truth:
            corrects = trials_correct(scorer, drawn, [s[0] for s in truth])
        else:
            corrects = [trial_correct(scorer, questions_t) for questions_t in drawn]
        RandomTrialResult.objects.bulk_create(
            [
                RandomTrialResult(campaign=campaign, system=system, trial=t, questions=len(q), correct=c)
                for t, q, c in zip(block, drawn, corrects, strict=True)
            ],
            ignore_conflicts=True,  # a trial another worker finished keeps its result
        )
        on_block(len(block))


def trial_correct(scorer, questions: Sequence[TrialQuestion], truth: Sequence[CandidateScore] | None = None) -> int:
    """How many questions of a trial the scorer answers right: the lowest-loss candidate is the ground truth.

    With ``truth`` (the ground truth's score per question, from an earlier call), only the false
    candidates are scored and the ground truth's score is put back at its position, so selection
    (ties to the first candidate) is the same as when scoring all candidates.
    """
    if truth is not None:
        return trials_correct(scorer, [questions], truth)[0]
    scores = scorer.score([q.context for q in questions], [list(q.candidates) for q in questions])
    return sum(select(s) == q.answer_index for s, q in zip(scores, questions, strict=True))


def trials_correct(scorer, trials: Sequence[Sequence[TrialQuestion]], truth: Sequence[CandidateScore]) -> list[int]:
    """:func:`trial_correct` for several trials of the same questions, in one scoring call: each
    question is scored once with the false candidates of every trial, and each trial's selection
    puts the ground truth's cached score back at its position."""
    contexts = [q.context for q in trials[0]]
    candidates = [[c for trial in trials for c in trial[i].false_candidates] for i in range(len(contexts))]
    false = scorer.score(contexts, candidates)
    corrects = []
    for t, trial in enumerate(trials):
        correct = 0
        for q, f, gt in zip(trial, false, truth, strict=True):
            k = len(q.false_candidates)
            mine = f[t * k : (t + 1) * k]
            correct += select([*mine[: q.answer_index], gt, *mine[q.answer_index :]]) == q.answer_index
        corrects.append(correct)
    return corrects
