"""Benchmark: the dataset workspace (/dashboard/<name>/) on a dataset of 10,000 questions.

Builds a PostgreSQL database with --questions questions (1 ground truth + 10 candidates each, a
candidate pool recorded for each), annotation open, a third of them scored by five annotators, the
quality snapshot computed, a test set built from the scored third and 500 jobs of several datasets;
then requests the workspace, the pool review of a question in the middle (its index cached after
the first request, as when paging) and the dashboard index repeatedly in-process and prints
p50/p99 time and the number of queries (target: < 300 ms).

    .venv/bin/python bench/dashboard.py [--questions 10000]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import drop_database, fresh_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--keep", action="store_true", help="keep the database (wellchosen_bench_dashboard) afterwards")
    parser.add_argument("--reuse", action="store_true", help="time the pages on a database kept by --keep")
    parser.add_argument(
        "--postgres", default=os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    )
    args = parser.parse_args()
    os.environ.update(
        {
            "DATABASE_URL": (
                args.postgres.rsplit("/", 1)[0] + "/wellchosen_bench_dashboard"
                if args.reuse
                else fresh_database(args.postgres, "wellchosen_bench_dashboard")
            ),
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_DEBUG": "0",
            "WELLCHOSEN_DATA_DIR": tempfile.mkdtemp(prefix="wellchosen-bench-dashboard-"),
            "CELERY_BROKER_URL": "memory://",
            "LOG_LEVEL": "WARNING",
            "DJANGO_ALLOWED_HOSTS": "testserver",
        }
    )
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection, connections
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Dataset
    from annotation.services.quality import quality_refresh

    if args.reuse:
        quality_refresh(dataset=Dataset.objects.get(name="big"))
    else:
        build(args.questions)
    # A bulk-loaded database has no planner statistics until autovacuum gets to it; a database
    # that has been in use has them.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    user = get_user_model().objects.get_or_create(username="boss", defaults={"is_staff": True, "is_superuser": True})[0]
    client = Client()
    client.force_login(user)

    slowest: dict[str, list[tuple[float, str]]] = {}

    def timed(url: str, n: int, *, uncached: bool = False) -> tuple[list[float], int]:
        times, queries = [], 0
        for _ in range(n):
            if uncached:
                cache.clear()
            with CaptureQueriesContext(connection) as captured:
                t = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - t)
            queries = len(captured)
            slowest[url] = sorted(((float(q["time"]), q["sql"]) for q in captured), reverse=True)[:6]
            assert response.status_code == 200, (url, response.status_code)
        return times, queries

    # The index shows the site-wide agreement of the last refresh (computed above, not per request).
    cold, cold_queries = timed("/dashboard/", 1)
    client.get("/dashboard/big/")  # warm
    from annotation.models import Question

    middle = (
        Question.objects.filter(dataset__name="big").order_by("id").values_list("id", flat=True)[args.questions // 2]
    )
    rows = [
        ("/dashboard/big/ (workspace)", *timed("/dashboard/big/", args.requests)),
        ("/dashboard/big/pools/ (pool review)", *timed(f"/dashboard/big/pools/?q={middle}", args.requests)),
        ("  (its index not cached)", *timed(f"/dashboard/big/pools/?q={middle}", 5, uncached=True)),
        ("/dashboard/", *timed("/dashboard/", args.requests)),
        ("/dashboard/ (first request)", cold, cold_queries),
    ]
    print(f"{'page':<38}{'p50':>10}{'p99':>10}{'queries':>10}{'target':>12}")
    for url, times, queries in rows:
        print(
            f"{url:<38}{np.percentile(times, 50) * 1000:>8.0f}ms{np.percentile(times, 99) * 1000:>8.0f}ms"
            f"{queries:>10}{'< 300 ms':>12}"
        )
    print("slowest queries of the last /dashboard/big/ request:")
    for seconds, sql in slowest["/dashboard/big/"]:
        print(f"  {seconds * 1000:6.0f} ms  {sql[:150]}")
    connections.close_all()
    if not args.keep:
        drop_database(args.postgres, "wellchosen_bench_dashboard")


def build(n_questions: int) -> None:
    from django.core.management import call_command

    from annotation.models import Annotator, Candidate, Context, Dataset, Question, Score
    from annotation.services.assignment import annotation_open
    from annotation.services.datasets import dataset_save
    from annotation.services.quality import quality_refresh
    from core.text import text_hash

    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    dataset = dataset_save(dataset=Dataset(name="big", attention_check_rate=0))
    contexts = Context.objects.bulk_create(
        [Context(dataset=dataset, source="bench", source_line=i + 1) for i in range(n_questions)], batch_size=5000
    )
    questions = Question.objects.bulk_create(
        [Question(dataset=dataset, context=c, ground_truth=f"Reply {c.pk}.") for c in contexts], batch_size=5000
    )
    candidates = Candidate.objects.bulk_create(
        [
            Candidate(question=q, text=t, text_hash=text_hash(t), is_ground_truth=(i == 0), source="lexical")
            for q in questions
            for i, t in enumerate([q.ground_truth] + [f"Candidate {j} of {q.pk}." for j in range(10)])
        ],
        batch_size=5000,
    )
    annotators = Annotator.objects.bulk_create([Annotator(provider="imported", external_id=f"a{i}") for i in range(40)])
    rng = np.random.default_rng(0)
    scored = [c for c in candidates if c.question_id % 3 == 0]
    Score.objects.bulk_create(
        [
            Score(
                candidate=c,
                annotator=annotators[(c.question_id + k) % 40],
                value=int(rng.integers(0, 6)),
                duration_ms=5000,
            )
            for c in scored
            for k in range(5)
        ],
        batch_size=10000,
    )
    annotation_open(dataset=dataset)
    quality_refresh(dataset=dataset)
    workspace_extras(dataset, questions)
    print(
        f"set-up: {n_questions:,} questions, {len(candidates):,} candidates, {len(scored) * 5:,} scores "
        f"in {time.perf_counter() - start:.0f} s"
    )


def workspace_extras(dataset, questions) -> None:
    """What the workspace's other steps read: pools, a release, and jobs of this and other datasets."""
    from annotation.job_params import QualityRefreshParams
    from annotation.models import Repository
    from core.models import Job, JobStatus
    from retrieval.job_params import BuildPoolsParams
    from retrieval.models import PoolStatus, QuestionRetrieval
    from testsets.job_params import BuildTestsetParams
    from testsets.services.build import testset_build

    repository = Repository.objects.create(name="films")
    QuestionRetrieval.objects.bulk_create(
        [QuestionRetrieval(question=q, repository=repository, status=PoolStatus.DONE, pool_size=10) for q in questions],
        batch_size=5000,
    )
    testset_build(dataset_name=dataset.name, name="big-v1")
    params = [
        BuildPoolsParams(dataset="big", repository="films"),
        BuildPoolsParams(dataset="other", repository="films"),
        QualityRefreshParams(dataset_id=dataset.pk),
        QualityRefreshParams(dataset_id=dataset.pk + 1),
        BuildTestsetParams(dataset="big", name="big-v1"),
    ]
    Job.objects.bulk_create(
        [Job(kind=p.kind, params=p.to_json(), status=JobStatus.SUCCEEDED) for i in range(100) for p in params]
    )


if __name__ == "__main__":
    main()
