import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.models import Job, JobStatus
from tests.factories import DatasetFactory

GOOD_GT, WRONG = [5, 5, 4, 5, 5], [1, 1, 2, 1, 1]


def run(*args, **kwargs) -> str:
    out = StringIO()
    call_command(*args, stdout=out, **kwargs)
    return out.getvalue()


def test_commands_are_recorded_as_jobs(db, write_file):
    path = write_file("d.jsonl", json.dumps({"context": ["a"], "response": "b"}) + "\n")
    report = json.loads(run("import_dialogues", path, format="jsonl", dataset="x"))
    assert report["questions"] == 1
    job = Job.objects.get()
    assert (job.kind, job.status, job.result["questions"]) == ("import_dialogues", JobStatus.SUCCEEDED, 1)


def test_filter_preview_prints_a_readable_summary(db, scored_question):
    scored_question(dataset=DatasetFactory(name="p"), gt=GOOD_GT, false=[WRONG] * 3 + [[4, 4, 4, 1, 1]])
    out = run("filter_preview", dataset="p")
    assert "dropped as acceptable:    1" in out
    assert "questions a test set would have: 1 (0 derived)" in out


def test_agreement_prints_both_kappas(db, scored_question):
    dataset = DatasetFactory(name="k")
    for _ in range(3):
        scored_question(dataset=dataset, gt=GOOD_GT, false=[WRONG, [0, 0, 1, 0, 0]])
    out = run("agreement", dataset="k")
    assert "9 items x 5 raters" in out and "6 categories" in out and "2 classes" in out
    assert json.loads(run("agreement", dataset="k", json=True))["items"] == 9


def test_unknown_dataset_is_a_command_error(db):
    with pytest.raises(CommandError, match="no dataset 'nope'"):
        run("agreement", dataset="nope")
    with pytest.raises(CommandError, match="no dataset 'nope'"):
        run("filter_preview", dataset="nope")
