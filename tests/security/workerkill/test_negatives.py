"""Generating negatives killed mid-run: the job resumes from its committed batches and ends with
exactly the negatives of a run never killed."""

import pytest

from annotation.models import Candidate, CandidateSource
from annotation.services.dialogue_import import dialogues_import
from core.models import Job
from core.services.jobs import job_create
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings
from negatives.models import QuestionGeneration
from negatives.services.generation import negatives_generate
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over

pytestmark = [pytest.mark.slow, pytest.mark.heavy, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

EVERY_WORD = -1e9


def negatives(dataset: str) -> dict[int, list[tuple]]:
    rows = Candidate.objects.filter(question__dataset__name=dataset, source=CandidateSource.GENERATED).values_list(
        "question__context__source_line", "text_hash", "rank"
    )
    found: dict[int, list[tuple]] = {}
    for line, *candidate in rows:
        found.setdefault(line, []).append(tuple(candidate))
    return {line: sorted(candidates) for line, candidates in found.items()}


def test_negatives_killed_mid_dataset_resume_and_end_equal_to_a_run_never_killed(cluster, tiny_mlm_dir, tmp_path):
    n = 2_000
    turns = sentences(4 * n, seed=21)
    dialogues = tmp_path / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    reference = negatives_generate(
        dataset_name="reference",
        mlm_path=str(tiny_mlm_dir),
        settings=ManipulationSettings(threshold=EVERY_WORD, per_question=2),
    )
    job = job_create(
        params=GenerateNegativesParams(dataset="killed", mlm=str(tiny_mlm_dir), threshold=EVERY_WORD, per_question=2),
        enqueue=False,
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionGeneration.objects.filter(question__dataset__name="killed").count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    assert_succeeded_once(job)
    assert job.result["skipped_finished"] == kept["done"]
    assert negatives("killed") == negatives("reference")
    generated = Candidate.objects.filter(question__dataset__name="killed", source=CandidateSource.GENERATED)
    assert generated.count() == reference["candidates_added"] > n
    assert QuestionGeneration.objects.filter(question__dataset__name="killed").count() == n
