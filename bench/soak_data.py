"""bench/soak.py's work on the stack's database, in the soak's own process (Django set up with the
stack's addresses): the datasets, repository and accounts before the run, and what the database holds
after it (scores against the submissions the clients saw acknowledged, jobs)."""

import random
from collections import Counter
from pathlib import Path

ANNOTATION_DATASET = "soak-annotation"
POOL_DATASETS = ["soak-pools-validation", "soak-pools-test"]
POOL_REPOSITORY = "soak-base"
TESTSET_DATASET = "demo-annotated"  # load_demo's annotated dataset: scores to build from
FALSE_PER_QUESTION = 4


def dailydialog_files(shared: Path) -> dict[str, Path] | None:
    files = {
        split: shared / "dailydialog" / split / f"dialogues_{split}.txt" for split in ("train", "validation", "test")
    }
    return files if all(path.is_file() for path in files.values()) else None


def generated_dialogues(path: Path, n: int, *, seed: int) -> Path:
    """DailyDialog's format (``__eou__``-separated turns, one dialogue a line) from made-up sentences."""
    rng = random.Random(seed)
    words = "time place friend film table window morning letter river garden music question answer".split()
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            turns = [f"Turn {t} of dialogue {i} is about the {rng.choice(words)} ." for t in range(rng.randint(4, 8))]
            handle.write(" __eou__ ".join(turns) + " __eou__\n")
    return path


def prepare(*, work: Path, shared: Path | None, annotators: int, questions: int, password: str) -> dict:
    """The soak's data, made through the services: a dataset of ``questions`` units open for
    annotation (DailyDialog train dialogues, each ground truth with FALSE_PER_QUESTION other
    dialogues' turns as false candidates), two datasets for the pool jobs, the repository they draw
    from (the Cornell sample, or the train dialogues' turns), and ``annotators`` annotator accounts.
    Returns the dialogue files the command-line imports read."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotation.models import (
        Annotator,
        AnnotatorProvider,
        Candidate,
        CandidateSource,
        Dataset,
        DatasetMembership,
        Repository,
    )
    from annotation.services.assignment import annotation_open
    from annotation.services.dialogue_import import dialogues_import
    from core.text import text_hash
    from retrieval.services.demo import DEMO_REPOSITORY
    from retrieval.services.repository_import import repository_import

    files = dailydialog_files(shared) if shared else None
    if files is None:
        files = {
            split: generated_dialogues(work / f"dialogues_{split}.txt", n, seed=seed)
            for seed, (split, n) in enumerate((("train", 11_000), ("validation", 1_000), ("test", 1_000)))
        }
    dialogues_import(path=files["train"], fmt="dailydialog", dataset_name=ANNOTATION_DATASET)
    for name, split in zip(POOL_DATASETS, ("validation", "test"), strict=True):
        dialogues_import(path=files[split], fmt="dailydialog", dataset_name=name)
    cornell = sorted((shared / "cornell_PARTIAL").glob("movie_lines*.txt")) if shared else []
    if cornell:
        repository_import(path=cornell[0], name=POOL_REPOSITORY, fmt="cornell")
    else:
        repository_import(path=files["train"], name=POOL_REPOSITORY, fmt="dailydialog")

    dataset = Dataset.objects.get(name=ANNOTATION_DATASET)
    dataset.adaptive_stopping = False  # every unit takes its full number of annotators
    dataset.attention_check_rate = 0.1
    dataset.attention_check_repository = Repository.objects.get(name=DEMO_REPOSITORY)
    dataset.save()
    rng = random.Random(0)
    with transaction.atomic():
        kept = list(dataset.questions.order_by("pk").values_list("pk", "ground_truth")[:questions])
        dataset.questions.exclude(pk__in=[pk for pk, _ in kept]).delete()
        truths = [text for _, text in kept]
        false = []
        for pk, truth in kept:
            texts = {text_hash(truth)}
            while len(texts) < FALSE_PER_QUESTION + 1:
                text = rng.choice(truths)
                if text_hash(text) not in texts:
                    texts.add(text_hash(text))
                    false.append(
                        Candidate(question_id=pk, text=text, text_hash=text_hash(text), source=CandidateSource.LEXICAL)
                    )
        Candidate.objects.bulk_create(false, batch_size=5000)
    units = annotation_open(dataset=dataset)
    users = get_user_model().objects
    for i in range(annotators):
        user = users.create_user(username=f"soak{i}", password=password)
        annotator = Annotator.objects.create(user=user, provider=AnnotatorProvider.INTERNAL, external_id=user.username)
        DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    return {"files": files, "units": units, "slots": units * dataset.annotators_per_item}


def dataset_pk(name: str) -> int:
    from annotation.models import Dataset

    return Dataset.objects.get(name=name).pk


def dataset_ready(name: str) -> bool:
    """The dataset exists (a command-line import commits it at its end)."""
    from annotation.models import Dataset

    return Dataset.objects.filter(name=name).exists()


def scores_check(*, acknowledged: dict[int, int]) -> dict:
    """The stored units and scores of the soak's annotators against the submissions the clients saw
    acknowledged (``acknowledged``: assignment id -> responses in the form, attention check included).
    A unit is lost when it was acknowledged but is not stored as submitted; a score is lost when a
    stored unit has fewer Score rows than candidates."""
    from django.db.models import Count

    from annotation.models import Assignment, AssignmentStatus, Score

    mine = Assignment.objects.filter(annotator__user__username__startswith="soak", status=AssignmentStatus.SUBMITTED)
    items = dict(mine.values_list("pk", "items"))
    candidates = {pk: sum(1 for item in unit if "candidate_id" in item) for pk, unit in items.items()}
    scores = Counter(Score.objects.filter(assignment_id__in=list(items)).values_list("assignment_id", flat=True))
    duplicates = (
        Score.objects.filter(annotator__user__username__startswith="soak")
        .values("candidate_id", "annotator_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    return {
        "acknowledged_units": len(acknowledged),
        "stored_units": len(items),
        "stored_scores": sum(scores.values()),
        "expected_scores": sum(candidates.values()),
        "lost_units": sum(1 for pk in acknowledged if pk not in items),
        "lost_scores": sum(max(0, candidates[pk] - scores.get(pk, 0)) for pk in acknowledged if pk in items),
        "extra_scores": sum(max(0, scores.get(pk, 0) - candidates[pk]) for pk in items),
        "form_mismatch": sum(1 for pk, n in acknowledged.items() if pk in items and len(items[pk]) != n),
        "stored_not_acknowledged": sum(1 for pk in items if pk not in acknowledged),
        "duplicate_pairs": duplicates,
    }


def jobs_check(*, since) -> dict:
    """Every job of the run (created at or after ``since``) by kind and status, the failed ones with
    their errors, and those that were claimed more than once (a worker that stopped beating)."""
    from core.models import Job, JobShard, JobShardStatus, JobStatus

    jobs = list(Job.objects.filter(created_at__gte=since).order_by("pk"))
    by_kind: dict[str, Counter] = {}
    seconds: dict[str, list[float]] = {}
    for job in jobs:
        by_kind.setdefault(job.kind, Counter())[job.status] += 1
        if job.status == JobStatus.SUCCEEDED and job.started_at and job.finished_at:
            seconds.setdefault(job.kind, []).append((job.finished_at - job.started_at).total_seconds())
    failed = Job.objects.filter(status=JobStatus.FAILED).order_by("pk")  # any, the demo's jobs too
    return {
        "by_kind": by_kind,
        "seconds": seconds,
        "failed": [(job.pk, job.kind, (job.error.strip().splitlines() or [""])[0]) for job in failed],
        "retried": [(job.pk, job.kind, job.attempts) for job in jobs if job.attempts > 1],
        # a shard claimed again: its worker stopped beating (or the shard failed and was retried)
        "shards_retried": JobShard.objects.filter(job__in=jobs, attempts__gt=1).count(),
        "shards_failed": JobShard.objects.filter(job__in=jobs, status=JobShardStatus.FAILED).count(),
        "unfinished": [(job.pk, job.kind, job.status) for job in jobs if not job.is_finished],
    }
