"""Jobs of one transaction killed mid-run, the four imports and building a test set: the killed
attempt leaves nothing, and the attempt that takes the job over does the whole work once."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db.models import Count

from annotation.job_params import ImportDialoguesParams, ImportScoresParams
from annotation.models import Candidate, Context, Question, Repository, Score, Turn, Utterance
from core.job_registry import JobParams
from core.services.jobs import job_create
from retrieval.job_params import ImportRepositoryParams
from tests.security.workerkill.corpus import sentences
from tests.security.workerkill.killing import assert_succeeded_once, kill_mid_job_and_take_over
from testsets.job_params import BuildTestsetParams, ImportHFTestsetParams, ImportTestsetParams
from testsets.models import TestSet, TestSetCandidate, TestSetQuestion
from testsets.services.import_tsv import testset_import

pytestmark = [pytest.mark.slow, pytest.mark.workers, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

ANNOTATORS = 5


def distinct(queryset, *fields: str) -> int:
    return queryset.values(*fields).distinct().count()


@dataclass
class ImportCase:
    """An import job over a generated file and the counts that a run never killed leaves."""

    params: JobParams
    expected: dict[str, int]
    counts: Callable[[], dict[str, int]]


def dialogues(folder: Path) -> ImportCase:
    n = 40_000
    turns = sentences(4 * n, seed=1)
    path = folder / "dialogues.txt"
    path.write_text("".join(" __eou__ ".join(turns[4 * i : 4 * i + 4]) + " __eou__\n" for i in range(n)))

    def counts() -> dict[str, int]:
        contexts = Context.objects.filter(dataset__name="killed")
        candidates = Candidate.objects.filter(question__dataset__name="killed")
        return {
            "questions": Question.objects.filter(dataset__name="killed").count(),
            "contexts": contexts.count(),
            "distinct source lines": distinct(contexts, "source", "source_line"),
            "turns": Turn.objects.filter(context__dataset__name="killed").count(),
            "candidates": candidates.count(),
            "distinct candidates": distinct(candidates, "question", "text_hash"),
        }

    expected = {
        "questions": n,
        "contexts": n,
        "distinct source lines": n,
        "turns": 3 * n,
        "candidates": n,
        "distinct candidates": n,
    }
    return ImportCase(ImportDialoguesParams(path=str(path), format="dailydialog", dataset="killed"), expected, counts)


def _testset_files(folder: Path, n: int, *, seed: int, scores: bool) -> tuple[Path, Path]:
    texts = sentences(7 * n, seed=seed)
    tsv, jsonl = folder / f"testset-{seed}.tsv", folder / f"scores-{seed}.jsonl"
    tsv.write_text("".join("\t".join(texts[7 * i : 7 * i + 7]) + "\n" for i in range(n)))
    if scores:
        line = json.dumps([[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3) + "\n"
        jsonl.write_text(line * n)
    return tsv, jsonl


def testset(folder: Path) -> ImportCase:
    n = 15_000
    tsv, jsonl = _testset_files(folder, n, seed=2, scores=True)

    def counts() -> dict[str, int]:
        candidates = Candidate.objects.filter(question__dataset__name="killed")
        scores = Score.objects.filter(candidate__question__dataset__name="killed")
        return {
            "questions": Question.objects.filter(dataset__name="killed").count(),
            "turns": Turn.objects.filter(context__dataset__name="killed").count(),
            "candidates": candidates.count(),
            "distinct candidates": distinct(candidates, "question", "text_hash"),
            "scores": scores.count(),
            "distinct scores": distinct(scores, "candidate", "annotator"),
        }

    expected = {
        "questions": n,
        "turns": 3 * n,
        "candidates": 4 * n,
        "distinct candidates": 4 * n,
        "scores": 4 * n * ANNOTATORS,
        "distinct scores": 4 * n * ANNOTATORS,
    }
    return ImportCase(ImportTestsetParams(path=str(tsv), scores_path=str(jsonl), dataset="killed"), expected, counts)


def testset_hf(folder: Path) -> ImportCase:
    n = 3_000
    texts = sentences(7 * n, seed=5)
    data = folder / "release" / "data"
    data.mkdir(parents=True)
    with (data / "test.jsonl").open("w") as out:
        for i in range(n):
            turns, choices = texts[7 * i : 7 * i + 3], texts[7 * i + 3 : 7 * i + 7]
            record = {
                "question_id": f"release-{i + 1:04d}",
                "context": turns,
                "choices": choices,
                "label": 0,
                "sources": ["ground_truth", "lexical", "lexical", "dense"],
                "derived_from": None,
                "scores": [[5, 4, 5, 5, 4]] + [[1, 0, 1, 2, 1]] * 3,
            }
            out.write(json.dumps(record) + "\n")

    def counts() -> dict[str, int]:
        candidates = Candidate.objects.filter(question__dataset__name="killed")
        scores = Score.objects.filter(candidate__question__dataset__name="killed")
        return {
            "questions": Question.objects.filter(dataset__name="killed").count(),
            "candidates": candidates.count(),
            "distinct candidates": distinct(candidates, "question", "text_hash"),
            "scores": scores.count(),
            "test sets": TestSet.objects.filter(name="release").count(),
        }

    expected = {"questions": n, "candidates": 4 * n, "distinct candidates": 4 * n, "scores": 4 * n * 5, "test sets": 1}
    return ImportCase(ImportHFTestsetParams(path=str(folder / "release"), dataset="killed"), expected, counts)


def scores(folder: Path) -> ImportCase:
    n = 4_000
    tsv, _ = _testset_files(folder, n, seed=3, scores=False)
    testset_import(tsv_path=tsv, dataset_name="scored")
    path = folder / "scores.csv"
    rows = Candidate.objects.filter(question__dataset__name="scored").values_list("question_id", "pk")
    with path.open("w") as out:
        out.write("question_id,candidate_id,annotator,score\n")
        for question_id, candidate_id in rows:
            for a in range(ANNOTATORS):
                out.write(f"{question_id},{candidate_id},mturk:W{a},{(candidate_id + a) % 6}\n")

    def counts() -> dict[str, int]:
        scores = Score.objects.filter(candidate__question__dataset__name="scored")
        return {
            "scores": scores.count(),
            "distinct scores": distinct(scores, "candidate", "annotator"),
            "annotators": distinct(scores, "annotator"),
            "scores per candidate": sorted(
                set(scores.values("candidate").annotate(n=Count("id")).values_list("n", flat=True))
            ),
        }

    expected = {
        "scores": 4 * n * ANNOTATORS,
        "distinct scores": 4 * n * ANNOTATORS,
        "annotators": ANNOTATORS,
        "scores per candidate": [ANNOTATORS],
    }
    return ImportCase(ImportScoresParams(path=str(path)), expected, counts)


def repository(folder: Path) -> ImportCase:
    unique = 200_000
    texts = sentences(unique, seed=4)
    path = folder / "repository.txt"
    # every tenth line repeats an earlier one: de-duplication must hold across the takeover too
    lines = [text if i % 10 else texts[i // 2] for i, text in enumerate(texts)]
    path.write_text("\n".join(lines) + "\n")
    distinct_texts = len(set(lines))

    def counts() -> dict[str, int]:
        utterances = Utterance.objects.filter(repository__name="killed")
        return {
            "repositories": Repository.objects.filter(name="killed").count(),
            "utterances": utterances.count(),
            "distinct texts": distinct(utterances, "text_hash"),
        }

    expected = {"repositories": 1, "utterances": distinct_texts, "distinct texts": distinct_texts}
    return ImportCase(ImportRepositoryParams(path=str(path), name="killed"), expected, counts)


@pytest.mark.parametrize("case", [dialogues, testset, testset_hf, scores, repository], ids=lambda case: case.__name__)
def test_an_import_killed_mid_file_is_taken_over_and_imports_the_file_exactly_once(
    case, cluster, filter_rules, tmp_path
):
    # given an import job over a file of thousands of lines
    import_case = case(tmp_path)
    before = import_case.counts()
    job = job_create(params=import_case.params, enqueue=False)

    def nothing_half_imported() -> None:
        assert import_case.counts() == before

    # when its worker is killed part-way through the file (which leaves nothing imported) and a
    # second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, after_kill=nothing_half_imported)
    # then the job succeeded once, and the file was imported exactly once: no row lost, none twice
    assert_succeeded_once(job)
    assert import_case.counts() == import_case.expected


def test_a_test_set_build_killed_mid_way_is_taken_over_and_builds_the_test_set_once(cluster, filter_rules, tmp_path):
    # given a scored dataset of 1,500 questions, every one good enough for the test set
    n = 1_500
    tsv, jsonl = _testset_files(tmp_path, n, seed=5, scores=True)
    testset_import(tsv_path=tsv, scores_path=jsonl, dataset_name="scored")
    questions = Question.objects.count()
    job = job_create(params=BuildTestsetParams(dataset="scored", name="r1"), enqueue=False)

    def nothing_half_built() -> None:
        assert (TestSet.objects.count(), TestSetQuestion.objects.count(), Question.objects.count()) == (0, 0, n)

    # when its worker is killed after it wrote the test set's rows (step 2 of 4, not committed), and
    # a second worker takes the job over
    job = kill_mid_job_and_take_over(job, cluster, kill_at=0.5, after_kill=nothing_half_built)
    # then the job succeeded once, with one test set of every question once
    assert_succeeded_once(job)
    testset = TestSet.objects.get()
    assert job.result["testset_id"] == testset.pk and testset.manifest["counts"]["questions"] == n
    items = TestSetQuestion.objects.filter(testset=testset)
    candidates = TestSetCandidate.objects.filter(item__testset=testset)
    assert (items.count(), distinct(items, "question")) == (n, n)
    assert (candidates.count(), distinct(candidates, "item", "candidate")) == (4 * n, 4 * n)
    assert Question.objects.count() == questions  # no derived question made twice
