import json

from django.core.management import call_command

from annotation.services.demo import demo_load
from evaluation.models import Evaluation, EvaluationStatus, System
from evaluation.services.demo import DEMO_SYSTEM
from testsets.services.demo import DEMO_TESTSET


def test_the_demo_registers_the_tfidf_baseline_which_evaluates_the_demo_test_set(db, capsys):
    # given the demo data, loaded twice
    demo_load(with_pools=False, with_models=False)
    demo_load(with_pools=False, with_models=False)
    # then one system is there: the TF-IDF baseline
    assert list(System.objects.values_list("name", "kind")) == [(DEMO_SYSTEM, "plugin")]
    # and it evaluates the demo test set
    call_command("evaluate", "--testset", DEMO_TESTSET, "--system", DEMO_SYSTEM, "--device", "cpu")
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.SUCCEEDED
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == evaluation.testset.manifest["counts"]["questions"] and 0 <= report["accuracy"] <= 1
