from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotation.models import Annotator, Candidate, Dataset, DatasetMembership, QuestionWork, Repository
from annotation.services.demo import demo_load
from core.models import Job, JobStatus
from core.selectors import job_outcome
from testsets.models import TestSet
from testsets.services.demo import DEMO_TESTSET


@pytest.mark.slow
@pytest.mark.heavy  # builds the demo pools with the embedding model; the plain demo load runs on both engines
def test_demo_loads_datasets_repository_a_test_set_and_pools_open_for_annotation(db):
    done = demo_load(with_models=False)
    assert len(done) == 7
    assert QuestionWork.objects.filter(dataset__name="demo-dialogues", is_open=True).count() == 40
    assert Candidate.objects.filter(question__dataset__name="demo-dialogues", is_ground_truth=False).count() == 400
    assert Dataset.objects.get(name="demo-dialogues").questions.count() == 40
    assert Repository.objects.get(name="demo-subtitles").utterances.count() > 350
    manifest = TestSet.objects.get(name=DEMO_TESTSET).manifest
    # the demo is written so that every rule and the derived questions show up
    assert manifest["counts"]["source_questions_by_ground_truth"]["rejected"] >= 1
    assert manifest["counts"]["candidates_by_decision"]["acceptable"] >= 1
    assert manifest["counts"]["candidates_by_decision"]["ungrammatical"] >= 1
    assert manifest["counts"]["derived_questions"] >= 1


def test_loading_the_demo_twice_changes_nothing(db):
    demo_load(with_pools=False, with_models=False)
    assert demo_load(with_pools=False, with_models=False) == []
    assert Dataset.objects.count() == 2


def test_demo_accounts_can_log_in_with_the_printed_passwords(db, settings, tmp_path, rf):
    settings.WELLCHOSEN_DATA_DIR = tmp_path
    out = StringIO()
    call_command("load_demo", "--no-pools", "--no-models", stdout=out)
    lines = {
        line.split(":")[0].strip(): line.rsplit("/ ", 1)[1] for line in out.getvalue().splitlines() if " / " in line
    }
    login = rf.post("/accounts/login/")  # login throttling counts every try by its request
    researcher = authenticate(login, username="researcher", password=lines["researcher (admin, dashboard)"])
    annotator = authenticate(login, username="annotator", password=lines["annotator"])
    assert researcher.is_staff and not annotator.is_staff
    assert Annotator.objects.filter(user=annotator, provider="internal").exists()
    assert DatasetMembership.objects.filter(annotator__user=annotator, dataset__name="demo-dialogues").exists()
    # and a second run prints the same, still valid passwords
    again = StringIO()
    call_command("load_demo", "--no-pools", "--no-models", stdout=again)
    assert out.getvalue().splitlines()[-2:] == again.getvalue().splitlines()[-2:]


def test_the_load_demo_command_leaves_a_finished_job_saying_what_it_loaded(db):
    call_command("load_demo", "--no-pools", "--no-accounts", "--no-models", stdout=StringIO())
    job = Job.objects.get(kind="load_demo")
    assert job.status == JobStatus.SUCCEEDED and len(job.result["loaded"]) == 5
    outcome = job_outcome(job=job)
    assert outcome["summary"].startswith("Loaded the demo: dataset demo-dialogues:")
    assert outcome["next_step"]["url"] == "/dashboard/demo-dialogues/"
