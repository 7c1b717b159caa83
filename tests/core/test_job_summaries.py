"""Each job kind's words on its result (JobParams.summary) and the page where its work goes on (next_step)."""

import pytest
from django.urls import reverse

from annotation.job_params import ImportDialoguesParams, ImportScoresParams, LoadDemoParams, QualityRefreshParams
from core.job_registry import job_kinds_all
from core.models import Job, JobStatus
from core.selectors import job_outcome
from crowd.job_params import CrowdPublishParams, CrowdSyncParams
from evaluation.job_params import CampaignParams, EvaluatePairsParams, EvaluateParams, GenerateParams
from negatives.job_params import GenerateNegativesParams
from pairs.job_params import BuildPairsParams, ImportPairsParams
from retrieval.job_params import BuildIndexesParams, BuildPoolsParams, ImportRepositoryParams
from testsets.job_params import AuditShortcutsParams, BuildTestsetParams, ImportHFTestsetParams, ImportTestsetParams


def _dataset(name="dd"):
    return reverse("dashboard-dataset", args=[name])


CASES = [
    (
        ImportDialoguesParams(path="/data/dialogues_test.txt", format="dailydialog", dataset="dd"),
        {"dataset": "dd", "lines": 100, "questions": 92, "skipped_blank": 1, "skipped_short": 7},
        "Imported 92 questions into dataset dd from dialogues_test.txt (100 lines); 8 lines skipped "
        "(1 blank, 7 too short).",
        _dataset,
    ),
    (
        ImportTestsetParams(path="/r/test.tsv", dataset="dd"),
        {"dataset": "dd", "questions": 10, "candidates": 40, "scores": 1200},
        "Imported 10 questions with 40 candidates and 1,200 scores into dataset dd from test.tsv.",
        _dataset,
    ),
    (
        ImportHFTestsetParams(path="/r/release", dataset="dd"),
        {"testset": "t1", "dataset": "dd", "questions": 10, "derived_questions": 2, "candidates": 40, "scores": 9},
        "Imported test set t1 into dataset dd: 10 questions (2 derived), 40 candidates, 9 scores.",
        _dataset,
    ),
    (
        ImportScoresParams(path="/r/scores.csv"),
        {"rows": 25794, "created": 25000, "unchanged": 794},
        "Read 25,794 scores from scores.csv: 25,000 new, 794 unchanged.",
        None,
    ),
    (
        BuildTestsetParams(dataset="dd", name="t1"),
        {"testset_id": 7, "name": "t1", "questions": 33, "derived_questions": 0, "candidates": 132},
        "Built test set t1 from dataset dd: 33 questions (0 derived) with 132 candidates.",
        lambda: reverse("admin:testsets_testset_change", args=[7]),
    ),
    (
        AuditShortcutsParams(dataset="dd"),
        {
            "audit_id": 2,
            "dataset": "dd",
            "testset_id": None,
            "source": "dataset pools dd",
            "questions": 918,
            "chance": 0.25,
            "above_chance": ["longest", "surface_classifier"],
        },
        "Audited dataset pools dd (918 questions, chance 0.250): above chance: longest, surface_classifier.",
        _dataset,
    ),
    (
        AuditShortcutsParams(testset="t1"),
        {
            "audit_id": 3,
            "dataset": None,
            "testset_id": 7,
            "source": "test set t1",
            "questions": 40,
            "chance": 0.25,
            "above_chance": [],
        },
        "Audited test set t1 (40 questions, chance 0.250): no baseline above chance (95 % interval).",
        lambda: reverse("admin:testsets_testset_change", args=[7]),
    ),
    (
        QualityRefreshParams(dataset_id=3),
        {"dataset": "dd", "annotators": 4, "alpha": 0.41234567},
        "Refreshed quality and agreement of dataset dd: 4 annotators, Krippendorff's α 0.412.",
        _dataset,
    ),
    (
        LoadDemoParams(),
        {
            "loaded": ["dataset demo-dialogues: 40 questions", "test set demo-annotated-v1: 12 questions"],
            "dataset": "dd",
        },
        "Loaded the demo: dataset demo-dialogues: 40 questions; test set demo-annotated-v1: 12 questions.",
        _dataset,
    ),
    (
        ImportRepositoryParams(path="/r/utterances.txt", name="rep"),
        {"repository": "rep", "lines": 30, "inserted": 25, "duplicates": 3, "skipped_blank": 2, "repository_size": 25},
        "Imported 25 utterances into repository rep from utterances.txt (30 lines; left out: 3 duplicates, "
        "2 blank); it holds 25 utterances.",
        lambda: reverse("admin:annotation_repository_changelist") + "?q=rep",
    ),
    (
        BuildIndexesParams(repository="rep"),
        {"lexical": {"utterances": 25}, "dense": {"utterances": 25, "model": "hash-64"}},
        "Built the lexical index (25 utterances) and the dense index (25 utterances, hash-64) of repository rep.",
        lambda: reverse("admin:annotation_repository_changelist") + "?q=rep",
    ),
    (
        BuildPoolsParams(dataset="dd", repository="rep"),
        {
            "dataset": "dd",
            "repository": "rep",
            "questions": 100,
            "built": 95,
            "skipped_finished": 0,
            "failed": 5,
            "short_pools": 2,
            "candidates_added": 950,
        },
        "Retrieved candidates for 95 questions of dataset dd from repository rep: 950 candidates added; "
        "questions 2 with a short pool, 5 failed.",
        _dataset,
    ),
    (
        GenerateNegativesParams(dataset="dd"),
        {
            "dataset": "dd",
            "questions": 10,
            "generated": 8,
            "questions_with_negative": 7,
            "candidates_added": 8,
            "too_short": 2,
            "failed": 0,
        },
        "Negatives for 7 of 10 questions of dataset dd: 8 candidates added; 1 questions with a selected word got "
        "no new candidate; questions 2 too short.",
        _dataset,
    ),
    (
        BuildPairsParams(dataset="dd", name="ps"),
        {"set": "ps", "dataset": "dd", "questions": 10, "pairs_added": 12, "pairs": 12, "failed": 0},
        "Built 12 contrastive pairs for set ps from 10 questions of dataset dd; the set holds 12 pairs.",
        lambda: reverse("pairs-review", args=["ps"]),
    ),
    (
        ImportPairsParams(path="/r/pairs.jsonl", name="ps"),
        {"set": "ps", "pairs": 40},
        "Imported 40 pairs into set ps from pairs.jsonl.",
        lambda: reverse("pairs-review", args=["ps"]),
    ),
    (
        CrowdPublishParams(batch_id=4),
        {"batch": "b1", "published_tasks": 20},
        "Published 20 tasks of crowd batch b1.",
        lambda: reverse("admin:crowd_crowdbatch_change", args=[4]),
    ),
    (
        CrowdSyncParams(batch_id=4),
        {"batch": "b1", "imported": 3, "already_imported": 17, "discarded": []},
        "Synced crowd batch b1: 3 assignments imported, 17 known before.",
        lambda: reverse("admin:crowd_crowdbatch_change", args=[4]),
    ),
    (
        EvaluateParams(evaluation_id=5),
        {
            "system": "gpt2",
            "testset": "t1",
            "questions": 33,
            "correct": 4,
            "accuracy": 0.12121212121212122,
            "ci95": [0.030303030303030304, 0.24242424242424243],
            "chance": 0.25,
        },
        "gpt2 on test set t1: accuracy 0.121 [0.030, 0.242] (chance 0.250) over 33 questions (4 right).",
        lambda: reverse("admin:evaluation_evaluation_change", args=[5]),
    ),
    (
        EvaluatePairsParams(evaluation_id=6),
        {"system": "gpt2", "pair_set": "ps", "n": 40, "correct": 30, "accuracy": 0.75, "ci95": [0.6, 0.875]},
        "gpt2 on pair set ps: accuracy 0.750 [0.600, 0.875] over 40 pairs (30 right).",
        lambda: reverse("admin:evaluation_pairevaluation_change", args=[6]),
    ),
    (
        GenerateParams(generation_id=8),
        {"system": "gpt2", "responses": 10, "empty_responses": 1, "mean_words": 7.25, "distinct_1": 0.51234},
        "gpt2 generated 10 responses (1 empty); 7.2 words on average, distinct-1 0.512.",
        lambda: reverse("admin:evaluation_generation_change", args=[8]),
    ),
    (
        CampaignParams(campaign_id=2),
        {"campaign": "c1", "systems": 3, "random": {"scored": 30, "skipped": 0}, "notes": []},
        "Campaign c1: 3 systems on the leaderboard; 30 RANDOM trials scored now, 0 done before.",
        lambda: reverse("campaign-report", args=["c1"]),
    ),
]


@pytest.mark.parametrize(("params", "result", "summary", "url"), CASES, ids=lambda v: getattr(v, "kind", None))
def test_each_kind_says_what_it_did_and_where_its_work_goes_on(params, result, summary, url):
    assert params.summary(result) == summary
    step = params.next_step(result)
    if url is None:
        assert step is None
    else:
        assert step.url == url()
        assert step.label


def test_every_registered_kind_has_a_case_here():
    assert {type(params).kind for params, *_ in CASES} == {kind.name for kind in job_kinds_all()}


def test_a_kind_without_a_summary_shows_its_result_as_rows(db):
    from core.job_registry import job_kind_register, job_kind_unregister
    from tests.core.scripted import ScriptedParams

    job_kind_register(params=ScriptedParams, handler=lambda p, j, pr: {})
    try:
        job = Job.objects.create(
            kind=ScriptedParams.kind, params={"x": 1}, status=JobStatus.SUCCEEDED, result={"kappa": 0.41666, "n": 1200}
        )
        outcome = job_outcome(job=job)
    finally:
        job_kind_unregister(ScriptedParams.kind)
    assert outcome == {"summary": "", "rows": [("kappa", "0.417"), ("n", "1,200")], "next_step": None}


@pytest.mark.django_db
@pytest.mark.parametrize("kind", job_kinds_all(), ids=lambda kind: kind.name)
def test_each_kind_names_the_permission_that_starts_it_and_that_permission_exists(kind):
    # Retrying a failed job needs it (core.selectors.job_retry_permitted): a typo would let no one retry.
    from django.contrib.auth.models import Permission

    app_label, codename = kind.start_permission.split(".")
    assert Permission.objects.filter(content_type__app_label=app_label, codename=codename).exists()
