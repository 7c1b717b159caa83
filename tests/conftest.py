import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

# The tests never reach the Hugging Face hub and never read the cache of whoever runs them: set
# before huggingface_hub is first imported (it reads them then). A test that needs a hub points
# huggingface_hub at the local double (the ``hub`` fixture, tests/hub_double.py).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = str(Path(tempfile.gettempdir()) / "wellchosen-tests-hf")
for _name in ("HF_HUB_CACHE", "HF_ENDPOINT", "HF_TOKEN", "TRANSFORMERS_CACHE"):
    os.environ.pop(_name, None)


def _threads_per_test_process() -> int | None:
    """The OpenMP threads each test process may use when pytest-xdist runs several: the cores
    shared out. Left as it is outside xdist. torch and faiss spin their OpenMP threads while they
    wait; two processes each spinning as many threads as there are cores made a 15-second model
    fixture take 115 s on two cores."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if workers < 2:
        return None
    return max(1, (os.cpu_count() or 1) // workers)


# Set before torch or faiss is first imported (each reads them then); the worker processes and
# servers the tests start inherit them.
if (_threads := _threads_per_test_process()) is not None:
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, str(_threads))

import pytest  # noqa: E402

from annotation.models import Dataset  # noqa: E402
from config.engines import EmbeddedRedis, RedisAddress, redis_address  # noqa: E402
from tests.factories import CandidateFactory, QuestionFactory, ScoreFactory  # noqa: E402
from tests.hub_double import HubDouble, hub_configure  # noqa: E402
from tests.task_sends import task_sends_recorded  # noqa: E402
from tests.tiny_models import (  # noqa: E402
    build_tiny_bart,
    build_tiny_chat_gpt2,
    build_tiny_gpt2,
    build_tiny_mlm,
    build_tiny_sentence_encoder,
    build_tiny_tokenizer,
)
from testsets.services.import_tsv import testset_import  # noqa: E402

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tmp_path_factory) -> Path:
    """A tokenizer trained on the test texts (tests that need a language model build a tiny one)."""
    return build_tiny_tokenizer(tmp_path_factory.mktemp("tiny-tokenizer"))


@pytest.fixture(scope="session")
def tiny_encoder_dir(tiny_tokenizer_dir, tmp_path_factory) -> Path:
    """A 2-layer sentence encoder with random weights: encoding thousands of texts takes seconds."""
    return build_tiny_sentence_encoder(tiny_tokenizer_dir, tmp_path_factory.mktemp("tiny-encoder"))


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tiny_tokenizer_dir, tmp_path_factory) -> Path:
    return build_tiny_gpt2(tiny_tokenizer_dir, tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_chat_gpt2_dir(tiny_tokenizer_dir, tmp_path_factory) -> Path:
    """The tiny GPT-2 whose tokenizer carries a chat template (tiny_models.CHAT_TEMPLATE)."""
    return build_tiny_chat_gpt2(tiny_tokenizer_dir, tmp_path_factory.mktemp("tiny-chat-gpt2"))


@pytest.fixture(scope="session")
def tiny_bart_dir(tiny_tokenizer_dir, tmp_path_factory) -> Path:
    return build_tiny_bart(tiny_tokenizer_dir, tmp_path_factory.mktemp("tiny-bart"))


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory) -> Path:
    """A 2-layer BERT masked LM (random weights, WordPiece tokenizer trained on the test texts)."""
    return build_tiny_mlm(tmp_path_factory.mktemp("tiny-mlm"))


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisAddress]:
    """The Redis of the tests marked ``redis``: the one at TEST_REDIS_URL (redis://127.0.0.1:6379) when it
    answers, otherwise an embedded one of this test process, on a unix socket, for the session."""
    address = redis_address(os.environ.get("TEST_REDIS_URL") or "redis://127.0.0.1:6379")
    if address.answers():
        yield address
        return
    folder = tmp_path_factory.mktemp("redis")
    server = EmbeddedRedis(folder / "data", log=folder / "redis.log", durable=False)
    server.start()
    try:
        yield server.address
    finally:
        server.stop()


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A Hugging Face hub double on 127.0.0.1 (empty: tests publish their models on it), with
    huggingface_hub online, pointed at it and caching in ``tmp_path / "hf"``."""
    with HubDouble().running() as double:
        hub_configure(monkeypatch, endpoint=double.url, home=tmp_path / "hf", offline=False)
        yield double


@pytest.fixture
def hub_offline(hub, tmp_path, monkeypatch):
    """Turns the ``hub`` fixture's huggingface_hub offline (HF_HUB_OFFLINE=1), its cache kept."""

    def offline() -> None:
        hub_configure(monkeypatch, endpoint=hub.url, home=tmp_path / "hf", offline=True)

    return offline


@pytest.fixture
def small_demo_recipes(monkeypatch) -> None:
    """The demo's toy models (negatives' masked LM, evaluation's causal system) made by tiny recipes:
    a few steps on a little text, seconds instead of most of a minute; the code path is the same."""
    from evaluation.services import demo_model
    from negatives.services import demo

    small = {"steps": 3, "max_chars": 20_000, "vocab_size": 400, "batch_size": 8}
    monkeypatch.setattr(demo, "DEMO_MLM_RECIPE", {**demo.DEMO_MLM_RECIPE, **small})
    monkeypatch.setattr(demo_model, "DEMO_GPT_RECIPE", {**demo_model.DEMO_GPT_RECIPE, **small})


@pytest.fixture(autouse=True)
def empty_cache():
    """Job progress and cancel flags live in the cache, keyed by job id; ids restart with every
    test database, so the cache must too."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def sent_tasks(monkeypatch) -> list[tuple[str, str, list]]:
    """Where each job's Celery task is sent: ``(task path, queue, args)``, instead of a broker."""
    from core.services import jobs

    return task_sends_recorded(monkeypatch, jobs)


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path) -> Path:
    """Every test gets its own data directory (uploads, search indexes, embeddings)."""
    settings.WELLCHOSEN_DATA_DIR = tmp_path / "data"
    settings.WELLCHOSEN_UPLOAD_DIR = tmp_path / "data" / "uploads"
    return settings.WELLCHOSEN_DATA_DIR


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real public corpora next to the project (../shared/data); tests that need them skip without them."""
    if not (SHARED_DATA / "README.md").is_file():
        pytest.skip(f"real data folder {SHARED_DATA} is missing (set WELLCHOSEN_SHARED_DATA to its location)")
    return SHARED_DATA


@pytest.fixture
def write_file(tmp_path):
    """Write bytes or text to a file in the test's temporary folder and return its path."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    return write


@pytest.fixture
def scored_question(db):
    """Build a question with a scored ground truth and scored false candidates.

    ``scored_question(gt=[5, 5, 4, 5, 5], false=[[1, 1, 2, 1, 1], ...])``; the same five
    annotators score every response.
    """

    def build(*, gt: list[int], false: list[list[int]], dataset=None, annotators=None):
        question = QuestionFactory(**({"dataset": dataset} if dataset else {}))
        ground_truth = question.candidates.get(is_ground_truth=True)
        n = len(gt)
        if annotators is None:
            from tests.factories import AnnotatorFactory

            annotators = AnnotatorFactory.create_batch(n)
        for annotator, value in zip(annotators, gt, strict=False):
            ScoreFactory(candidate=ground_truth, annotator=annotator, value=value)
        for i, values in enumerate(false):
            candidate = CandidateFactory(question=question, text=f"false candidate {question.pk}-{i}")
            for annotator, value in zip(annotators, values, strict=False):
                ScoreFactory(candidate=candidate, annotator=annotator, value=value)
        return question

    return build


@pytest.fixture
def sato_dataset(db, shared_data, tmp_path):
    """Sato et al.'s released human scores, imported with a TSV of placeholder texts."""
    scores_path = shared_data / "human_annotated" / "eval-via-selection" / "human_scores.jsonl"
    n = sum(1 for _ in scores_path.open())
    tsv = tmp_path / "sato.tsv"
    tsv.write_text(
        "".join(
            "\t".join(
                [f"context {i} turn {t}" for t in range(3)]
                + [f"ground truth {i}"]
                + [f"false candidate {i}.{j}" for j in range(3)]
            )
            + "\n"
            for i in range(n)
        )
    )
    testset_import(tsv_path=tsv, scores_path=scores_path, dataset_name="sato")
    return Dataset.objects.get(name="sato"), scores_path


# What a test needs to reach the database (pytest-django): any of these in its fixture closure, or
# the django_db mark.
DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
)


def uses_database(item: pytest.Item) -> bool:
    return item.get_closest_marker("django_db") is not None or bool(
        DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


def pytest_collection_modifyitems(config, items):
    """WELLCHOSEN_TEST_DATABASE_ONLY=1 (make test-postgres) keeps the tests that use the database, the
    worker tests and those marked ``engine``: the others cannot reach it (pytest-django refuses
    them), so their outcome is the SQLite pass's and a second run on PostgreSQL would repeat it."""
    if os.environ.get("WELLCHOSEN_TEST_DATABASE_ONLY") != "1":
        return
    keep, repeated = [], []
    for item in items:
        reaches = uses_database(item) or item.get_closest_marker("workers") or item.get_closest_marker("engine")
        (keep if reaches else repeated).append(item)
    if repeated:
        config.hook.pytest_deselected(items=repeated)
        items[:] = keep
