"""A database made by the code before the core, crowd and testsets apps and their moved models migrates forward
intact.

The code of that commit (the parent of the commit that added core's first migration) is taken
from git, makes a database and fills it (demo data, jobs run by its commands, candidates citing
utterances, evaluations, a campaign, permissions); the current code then migrates it. Every row of
every table must be the same afterwards, and the current models must read them.
"""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
MOVE_MIGRATION = "core/migrations/0001_initial.py"

# Run by the old code (`manage.py shell -c`): rows that point at the moved models from every app.
SEED = """
from django.contrib.auth.models import Permission, User
from annotation.models import Candidate, CandidateSource, CrowdBatch, CrowdTask, Question, TestSet, Job
from retrieval.models import QuestionRetrieval, Repository, RetrievalIndex, Utterance
from evaluation.models import Campaign, Evaluation, Generation, System

repository = Repository.objects.get(name="demo-subtitles")
job = Job.objects.filter(kind="build_indexes").get()
utterances = list(Utterance.objects.filter(repository=repository).order_by("id")[:3])
for question, utterance in zip(Question.objects.filter(dataset__name="demo-dialogues").order_by("id"), utterances):
    Candidate.objects.create(
        question=question, utterance=utterance, text=utterance.text, text_hash=utterance.text_hash,
        source=CandidateSource.LEXICAL, rank=1, retrieval_score=1.5,
    )
    QuestionRetrieval.objects.create(question=question, repository=repository, status="done", job=job)
system = System.objects.create(name="plugin-system", kind="plugin", plugin="evaluation.baselines.RandomBaseline")
testset = TestSet.objects.get()
Evaluation.objects.create(testset=testset, system=system, job=job)
Generation.objects.create(system=system, dataset=testset.dataset, job=job)
Campaign.objects.create(name="c1", testset=testset, repository=repository, job=job)
question = Question.objects.filter(dataset__name="demo-dialogues").order_by("id").first()
batch = CrowdBatch.objects.create(dataset=question.dataset, name="pilot", provider="link")
CrowdTask.objects.create(batch=batch, question=question, provider="link", max_assignments=3)
user = User.objects.create_user("reader", password="x")
user.user_permissions.add(
    Permission.objects.get(content_type__app_label="annotation", codename="view_job"),
    Permission.objects.get(content_type__app_label="annotation", codename="view_crowdbatch"),
    Permission.objects.get(content_type__app_label="retrieval", codename="view_repository"),
    Permission.objects.get(content_type__app_label="retrieval", codename="view_utterance"),
    Permission.objects.get(content_type__app_label="annotation", codename="view_testset"),
)
print(Job.objects.count(), RetrievalIndex.objects.count())
"""

# Run by the current code on the migrated database: the moved models read the old rows.
CHECK = """
import json
from django.contrib.auth.models import User
from annotation.models import Candidate, Repository
from core.models import Job
from crowd.models import CrowdBatch
from evaluation.models import Campaign
from retrieval.models import QuestionRetrieval
from testsets.models import TestSet

user = User.objects.get(username="reader")
cited = Candidate.objects.filter(utterance__isnull=False).select_related("utterance__repository")
print(json.dumps({
    "jobs": sorted(Job.objects.values_list("kind", flat=True)),
    "cited": sorted({c.utterance.repository.name for c in cited}),
    "cited_count": cited.count(),
    "pool_jobs": sorted({r.job.kind for r in QuestionRetrieval.objects.select_related("job")}),
    "campaign": [Campaign.objects.get().repository.name, Campaign.objects.get().job.kind],
    "utterances": Repository.objects.get(name="demo-subtitles").utterances.count(),
    "perms": sorted(p for p in user.get_all_permissions()),
    "crowd": [(b.name, b.dataset.name, b.tasks.count()) for b in CrowdBatch.objects.all()],
    "testsets": [
        (t.dataset.name, t.items.count() > 0, t.evaluations.count(), t.campaigns.count()) for t in TestSet.objects.all()
    ],
}))
"""


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def old_code(tmp_path_factory) -> Path:
    """The project as it was just before core's first migration was added, from git."""
    try:
        added = git("log", "--diff-filter=A", "--format=%H", "--", MOVE_MIGRATION).split()
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no git history to take the previous code from: {exc}")
    if not added:
        pytest.skip(f"{MOVE_MIGRATION} is not committed yet: no previous code to make the database with")
    folder = tmp_path_factory.mktemp("old-code")
    archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", f"{added[-1]}^"], capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"the commit before {added[-1][:10]} is not in this clone (shallow?): {archive.stderr.decode()}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


@pytest.fixture
def database_url(settings, tmp_path):
    """A new, empty database of the kind this test run uses: a SQLite file or a PostgreSQL database."""
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        yield f"sqlite:///{tmp_path / 'old.sqlite3'}"
        return
    import psycopg

    from tests.worker_helpers import postgres_url

    db = settings.DATABASES["default"]
    admin = postgres_url(db, db["NAME"])
    name = f"wellchosen_migrate_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield postgres_url(db, name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(code: Path, database_url: str, data_dir: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "WELLCHOSEN_", "PYTEST"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=database_url,
        WELLCHOSEN_DATA_DIR=str(data_dir),
        PYTHONPATH=str(code),
        CELERY_TASK_ALWAYS_EAGER="1",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=code, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)} in {code}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


# Apps that the previous code did not have: their tables, content types and permissions are new
# rows, left out of the comparison, and the key counters of those tables move on.
NEW_APPS = ("axes", "negatives", "pairs")
# Models added to apps the previous code had: their content types and permissions are new rows too.
NEW_MODELS = (
    ("evaluation", "pairevaluation"),
    ("evaluation", "pairresult"),
    ("core", "jobshard"),
    ("annotation", "invitation"),
    ("testsets", "shortcutaudit"),
    ("crowd", "crowdlinkentry"),
    ("annotation", "scorerevision"),
)
COUNTERS_THAT_MOVE = {"django_migrations", "django_content_type", "auth_permission"}


def table_digests(
    database_url: str, columns: dict[str, list[str]] | None = None
) -> tuple[dict[str, tuple[int, str]], dict[str, list[str]]]:
    """Every table's row count and a digest of its rows (in a fixed order), and the columns read.
    ``columns``: read only these of a table (a column later migrations added is not compared: every
    row must keep each value it had)."""
    if database_url.startswith("sqlite:///"):
        conn = sqlite3.connect(database_url.removeprefix("sqlite:///"))
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    else:
        import psycopg

        conn = psycopg.connect(database_url)
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema='public' AND table_type='BASE TABLE'"
            )
        ]
    new_apps = ", ".join(f"'{app}'" for app in NEW_APPS)
    new_models = " AND ".join(f"NOT (app_label = '{app}' AND model = '{model}')" for app, model in NEW_MODELS)
    old_types = f"app_label NOT IN ({new_apps}) AND {new_models}"
    old_rows_only = {
        "django_content_type": f" WHERE {old_types}",
        "auth_permission": f" WHERE content_type_id IN (SELECT id FROM django_content_type WHERE {old_types})",
    }
    new_tables = tuple(f"{app}_" for app in NEW_APPS) + tuple(f"{app}_{model}" for app, model in NEW_MODELS)
    digests, read = {}, {}
    try:
        for table in tables:
            if table.startswith(new_tables):
                continue
            wanted = ", ".join(f'"{c}"' for c in columns[table]) if columns and table in columns else "*"
            cursor = conn.execute(f'SELECT {wanted} FROM "{table}"' + old_rows_only.get(table, ""))
            read[table] = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
            if table == "sqlite_sequence":  # the counters of SQLite's autoincrement keys
                rows = [row for row in rows if row[0] not in COUNTERS_THAT_MOVE and not row[0].startswith(new_tables)]
            rows = sorted(repr(tuple(row)) for row in rows)
            digests[table] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest())
    finally:
        conn.close()
    return digests, read


@pytest.mark.slow
@pytest.mark.engine  # a database of its own, migrated by the old and the new code's processes
def test_a_database_made_by_the_previous_code_migrates_forward_with_every_row_intact(old_code, database_url, tmp_path):
    # given a database made and filled by the previous code
    data = tmp_path / "data"
    manage(old_code, database_url, data, "migrate", "--noinput")
    manage(old_code, database_url, data, "load_demo", "--no-pools", "--no-accounts")
    manage(old_code, database_url, data, "build_indexes", "--repository", "demo-subtitles", "--only", "lexical")
    manage(old_code, database_url, data, "shell", "-c", SEED)
    before, columns = table_digests(database_url)
    assert before["annotation_job"][0] == 1 and before["retrieval_utterance"][0] > 350

    # when the current code migrates it
    manage(PROJECT_ROOT, database_url, data, "migrate", "--noinput")

    # then no table lost, gained or changed a row, but for the content types of the moved models
    # (renamed in place) and the migrations' own record
    after, _ = table_digests(database_url, columns)
    changed = {t for t in before if before[t] != after.get(t)}
    assert changed == {"django_migrations", "django_content_type"}
    assert after["django_content_type"][0] == before["django_content_type"][0]
    assert set(after) == set(before)
    # and the current models read the old rows, permissions included
    seen = json.loads(manage(PROJECT_ROOT, database_url, data, "shell", "-c", CHECK).strip().splitlines()[-1])
    assert seen["jobs"] == ["build_indexes"]
    assert seen["cited"] == ["demo-subtitles"] and seen["cited_count"] == 3
    assert seen["pool_jobs"] == ["build_indexes"] and seen["campaign"] == ["demo-subtitles", "build_indexes"]
    assert seen["utterances"] == before["retrieval_utterance"][0]
    assert {"core.view_job", "annotation.view_repository", "annotation.view_utterance"} <= set(seen["perms"])
    assert "crowd.view_crowdbatch" in seen["perms"] and "testsets.view_testset" in seen["perms"]
    assert [entry[1:] for entry in seen["testsets"]] == [[True, 1, 1]]
    assert seen["crowd"] == [["pilot", "demo-dialogues", 1]]
    # and nothing is left for makemigrations, and a job of the current code runs on it
    manage(PROJECT_ROOT, database_url, data, "makemigrations", "--check", "--dry-run")
    report = json.loads(
        manage(PROJECT_ROOT, database_url, data, "build_testset", "--dataset", "demo-annotated", "--name", "after")
    )
    assert report["name"] == "after" and report["questions"] > 0
