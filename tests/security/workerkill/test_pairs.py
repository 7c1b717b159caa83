"""Building contrastive pairs killed mid-run: the job resumes from its committed batches and ends
with exactly the pairs of a build never killed."""

import pytest

from annotation.models import Repository, Utterance
from annotation.services.dialogue_import import dialogues_import
from core.models import Job
from core.services.jobs import job_create
from core.text import text_hash
from core.wordnet import WORDNET_INSTALL_HINT, wordnet_available
from pairs.job_params import BuildPairsParams
from pairs.models import Pair, QuestionBuild
from pairs.services.building import pair_set_for_build, pairs_build
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def pairs_of(name: str) -> list[tuple]:
    return sorted(
        Pair.objects.filter(pair_set__name=name).values_list(
            "question__context__source_line", "type", "subtype", "criterion", "incorrect"
        )
    )


def test_a_build_killed_mid_dataset_resumes_and_ends_equal_to_a_build_never_killed(cluster, tmp_path):
    if not wordnet_available():
        pytest.skip(f"WordNet is missing: {WORDNET_INSTALL_HINT}")
    n = 1_500
    turns = sentences(4 * n, seed=33)
    dialogues = tmp_path / "dialogues.txt"
    dialogues.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))
    for name in ("reference", "killed"):
        dialogues_import(path=dialogues, fmt="dailydialog", dataset_name=name)
    repository = Repository.objects.create(name="films")
    Utterance.objects.bulk_create(
        Utterance(repository=repository, text=t, text_hash=text_hash(t), n_tokens=len(t.split()), source_line=i + 1)
        for i, t in enumerate(sentences(6_000, seed=34))
    )
    settings = {"types": ["content", "sentence", "function"], "criteria": ["el", "ml"], "per_question": 1, "seed": 5}
    reference = pair_set_for_build(dataset_name="reference", set_name="reference", repository_name="films", **settings)
    report = pairs_build(pair_set=reference)
    job = job_create(
        params=BuildPairsParams(dataset="killed", name="killed", repository="films", **settings), enqueue=False
    )
    kept = {}

    def committed_batches_kept() -> None:
        kept["done"] = QuestionBuild.objects.filter(pair_set__name="killed").count()
        assert kept["done"] >= Job.objects.get(pk=job.pk).done_count > 0

    job = kill_mid_job_and_take_over(job, cluster, after_kill=committed_batches_kept)
    assert_succeeded_once(job)
    assert job.result["skipped_finished"] == kept["done"]
    assert pairs_of("killed") == pairs_of("reference")
    assert Pair.objects.filter(pair_set__name="killed").count() == report["pairs_added"] > n
    assert QuestionBuild.objects.filter(pair_set__name="killed").count() == n
