"""Fixtures of the evaluation tests (the tiny local models live in tests/tiny_models.py)."""

import pytest


@pytest.fixture
def testset(db, scored_question):
    """Test set r1 of dataset eval: four questions of 1 ground truth + 3 false candidates; in two of
    them one false candidate is dense."""
    from annotation.models import Candidate
    from tests.factories import DatasetFactory
    from testsets.services.build import testset_build

    dataset = DatasetFactory(name="eval")
    for n in range(4):
        question = scored_question(dataset=dataset, gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1]] * 3)
        if n < 2:
            false = question.candidates.filter(is_ground_truth=False).first()
            Candidate.objects.filter(pk=false.pk).update(source="dense", text=f"dense {false.text}")
    return testset_build(dataset_name="eval", name="r1", seed=0)


# the generation tests (test_generation*.py; plugins and helpers in generation_support.py)


@pytest.fixture
def chat_dataset(db):
    """A dataset of six questions whose contexts have 1 to 3 turns."""
    from tests.evaluation.generation_support import CONTEXTS
    from tests.factories import DatasetFactory, QuestionFactory

    dataset = DatasetFactory(name="chat")
    for turns in CONTEXTS:
        QuestionFactory(dataset=dataset, context__turns=turns)
    return dataset


@pytest.fixture
def echo_system(db):
    """A plugin system that answers "echo <last turn>" (EchoPlugin)."""
    from evaluation.scoring.loading import scorer_cache_clear
    from evaluation.services.systems import system_register
    from tests.evaluation.generation_support import PLUGINS, EchoPlugin

    EchoPlugin.reset()
    yield system_register(name="echo", kind="plugin", plugin=f"{PLUGINS}.EchoPlugin")
    EchoPlugin.reset()
    scorer_cache_clear()


@pytest.fixture
def gpt_system(db, tiny_gpt2_dir):
    """The tiny GPT-2 as a system with speaker tags and a newline separator."""
    from evaluation.scoring.loading import scorer_cache_clear
    from evaluation.services.systems import system_register

    yield system_register(name="gpt", kind="causal", checkpoint=str(tiny_gpt2_dir), speaker_tags=True)
    scorer_cache_clear()


@pytest.fixture
def two_gpts(db, tiny_gpt2_dir):
    """The tiny GPT-2 twice, as "reference" and "sharded": two runs of one model on the same data
    (the sharded-job tests compare a run in shards with one in one piece)."""
    from evaluation.scoring.loading import scorer_cache_clear
    from evaluation.services.systems import system_register

    systems = [
        system_register(name=name, kind="causal", checkpoint=str(tiny_gpt2_dir), speaker_tags=True)
        for name in ("reference", "sharded")
    ]
    yield systems
    scorer_cache_clear()


@pytest.fixture
def products_in_torch(monkeypatch):
    """A scorer's products stay torch's (WELLCHOSEN_CPU_ONEDNN=0), for tests of what the copy runs
    then: through oneDNN, an MLP's GELU is applied by its first product instead
    (test_scoring_cpu_linear.py)."""
    from evaluation.scoring.cpu_linear import onednn_linear_available

    monkeypatch.setenv("WELLCHOSEN_CPU_ONEDNN", "0")
    onednn_linear_available.cache_clear()
    yield
    monkeypatch.undo()
    onednn_linear_available.cache_clear()
