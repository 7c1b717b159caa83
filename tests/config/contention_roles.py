"""The processes of test_long_import_contention, each on the database at DATABASE_URL:

    python -m tests.config.contention_roles prepare FOLDER    # a dataset open for annotation, a running job
    python -m tests.config.contention_roles probe FOLDER      # the writes that (used to) fail
    python -m tests.config.contention_roles import FOLDER     # the repository import that holds its transaction

They meet through files in FOLDER: ``prepared.json`` (what prepare made), ``ready`` (the probe is
logged in), ``holding`` (the import has written its rows and holds its transaction), ``probed.json``
(what the probe saw) and ``release`` (the import may commit).
"""

import json
import sys
import time
import traceback
from pathlib import Path

import django

HANG_GUARD_S = 900  # a guard against a hang, never a speed limit (tests.worker_helpers)
SQLITE_BUSY_TIMEOUT_S = 1
IMPORT_LINES = 50_000


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} did not appear within {HANG_GUARD_S} s")
        time.sleep(0.05)


def prepare(folder: Path) -> None:
    """A dataset open for annotation (attention checks from a repository, so the utterance table is
    not empty: the import takes its incremental path, as beside the demo's repository), an annotator
    of it, and a pool job claimed by a worker (running), whose progress the probe reports."""
    from annotation.models import Annotator, AnnotatorProvider, DatasetMembership
    from annotation.services.assignment import annotation_open
    from core.services.jobs import job_claim, job_create
    from retrieval.job_params import BuildPoolsParams
    from tests.factories import (
        CandidateFactory,
        DatasetFactory,
        QuestionFactory,
        UserFactory,
        attention_check_repository,
    )

    dataset = DatasetFactory(name="contended", adaptive_stopping=False, attention_check_rate=0.5)
    checks = attention_check_repository(dataset, utterances=20)
    for _ in range(3):
        question = QuestionFactory(dataset=dataset)
        CandidateFactory(question=question, text=f"The ferry to question {question.pk} leaves at six.")
    annotation_open(dataset=dataset)
    user = UserFactory(username="contended-annotator")
    annotator = Annotator.objects.create(user=user, provider=AnnotatorProvider.INTERNAL, external_id=user.username)
    DatasetMembership.objects.create(annotator=annotator, dataset=dataset)
    job = job_create(params=BuildPoolsParams(dataset=dataset.name, repository=checks.name), enqueue=False)
    job_claim(job_id=job.pk)
    (folder / "prepared.json").write_text(json.dumps({"user": user.pk, "job": job.pk}))


def failure(error: Exception) -> tuple[str, str]:
    """The error, and the project's module whose code raised it (the last frame outside packages)."""
    root = Path(__file__).resolve().parents[2]
    frames = [Path(frame.filename) for frame in traceback.extract_tb(error.__traceback__)]
    ours = [frame.relative_to(root) for frame in frames if frame.is_relative_to(root) and ".venv" not in frame.parts]
    return f"{type(error).__name__}: {error}", str(ours[-1]) if ours else ""


def probe(folder: Path) -> None:
    """Log in (a write: done before the import starts), then, while the import holds its
    transaction, report the running job's progress and ask for the next unit."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from core.models import Job
    from core.services.jobs import JobProgress

    if connection.vendor == "sqlite":
        # A writer waits this long for SQLite's write lock, then fails with "database is locked".
        # The settings give it 30 s (config/settings/base.py); the import holds the lock until the
        # probe is done, however long it waits, so 1 s fails the same way, sooner.
        connection.settings_dict["OPTIONS"]["timeout"] = SQLITE_BUSY_TIMEOUT_S
    setup_test_environment()  # the test client's host name
    prepared = json.loads((folder / "prepared.json").read_text())
    client = Client()
    client.force_login(get_user_model().objects.get(pk=prepared["user"]))
    (folder / "ready").touch()
    wait_for(folder / "holding")
    probed = {}
    try:
        JobProgress(Job.objects.get(pk=prepared["job"])).update(done=1, total=2, phase="retrieving", force=True)
        probed["progress"] = "written"
        probed["progress_stored"] = Job.objects.get(pk=prepared["job"]).done_count
    except Exception as error:  # noqa: BLE001 - what the test looks at
        probed["progress"], probed["progress_raised_in"] = failure(error)
    try:
        response = client.get("/annotate/")
        probed["annotate"] = response.status_code
        probed["unit_shown"] = 'id="unit-form"' in response.content.decode()
    except Exception as error:  # noqa: BLE001 - the test client raises what the view raised
        probed["annotate"], probed["annotate_raised_in"] = failure(error)
    (folder / "probed.json").write_text(json.dumps(probed))
    (folder / "release").touch()


def repository_import_held(folder: Path) -> None:
    """The real import of a file of IMPORT_LINES lines, held open after its last line is written
    (its last progress report) until the probe is done, then committed: an import of a larger file
    holds the same transaction for as long as it reads (minutes at millions of lines)."""
    from core.services.jobs import JobProgress, job_claim, job_create
    from retrieval.job_params import ImportRepositoryParams
    from retrieval.services.repository_import import repository_import

    class HeldProgress(JobProgress):
        def update(self, **counts) -> None:
            super().update(**counts)
            if not counts.get("estimated", True):  # the file is read and its rows written
                (folder / "holding").touch()
                wait_for(folder / "release")

    path = folder / "repository.txt"
    path.write_text("".join(f"Line {i} of a subtitle file, about the harbour.\n" for i in range(IMPORT_LINES)))
    job = job_create(params=ImportRepositoryParams(path=str(path), name="long-import"), enqueue=False)
    report = repository_import(path=path, name="long-import", progress=HeldProgress(job_claim(job_id=job.pk)))
    print(json.dumps(report))


ROLES = {"prepare": prepare, "probe": probe, "import": repository_import_held}

if __name__ == "__main__":
    django.setup()
    ROLES[sys.argv[1]](Path(sys.argv[2]))
