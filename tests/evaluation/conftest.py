"""Fixtures of the evaluation tests (the tiny local models live in tests/tiny_models.py)."""

import pytest

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
