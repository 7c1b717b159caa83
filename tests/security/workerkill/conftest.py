"""The worker-kill suite (docs/security.md): for each long job kind, a worker killed mid-job with
SIGKILL, the job taken over by a second worker, and a result exactly that of a run never killed.
Redis (tests/conftest.py's redis_server) is broker and cache, as deployed."""

import uuid

import pytest

from config.celery import app as celery_app
from tests.security.workerkill.killing import STALE_AFTER, Cluster
from tests.worker_helpers import redis_broker

BROKER_DB, CACHE_DB = 15, 13


@pytest.fixture
def cluster(settings, monkeypatch, tmp_path, data_dir, redis_server):
    """Redis as broker (queues under a prefix of this test's) and as the shared cache, the
    stale limit of STALE_AFTER seconds in every process; workers are started by the test."""
    import redis

    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)  # messages go to the workers

    tag = f"wellchosen-test-{uuid.uuid4().hex[:10]}"
    cache_url = redis_server.url(CACHE_DB)
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": cache_url, "KEY_PREFIX": tag}
    }
    settings.WELLCHOSEN_JOB_STALE_AFTER = STALE_AFTER
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = tmp_path / "workers"
    logs.mkdir()
    env = {
        "WELLCHOSEN_TEST_CACHE_URL": cache_url,
        "WELLCHOSEN_TEST_CACHE_PREFIX": tag,
        "WELLCHOSEN_JOB_STALE_AFTER": str(STALE_AFTER),
        # imports write (and report progress) every 1,000 rows instead of 5,000, so that a file
        # of a few thousand questions is killed while its rows are being written
        "WELLCHOSEN_IMPORT_BATCH_SIZE": "1000",
    }
    broker = redis_broker(redis_server.broker_url(BROKER_DB), key_prefix=f"{tag}:")
    running = Cluster(broker=broker, data_dir=data_dir, logs=logs, env=env)
    try:
        yield running
    finally:
        for worker in running.workers:
            worker.stop()
        for db in (BROKER_DB, CACHE_DB):
            client = redis.Redis.from_url(redis_server.url(db))
            keys = list(client.scan_iter(match=f"*{tag}*"))
            if keys:
                client.delete(*keys)


@pytest.fixture
def tiny_encoder(settings, cluster, tiny_encoder_dir):
    """The tiny sentence encoder (ONNX int8, as on a CPU worker) here and in the workers: encoding
    tens of thousands of utterances takes seconds, not minutes. Its ONNX export is made here, once, before any
    worker needs it."""
    from retrieval.dense.encoder import get_encoder

    settings.WELLCHOSEN_EMBEDDING_MODEL = str(tiny_encoder_dir)
    settings.WELLCHOSEN_EMBEDDING_BACKEND = "onnx-int8"
    cluster.env |= {"WELLCHOSEN_EMBEDDING_MODEL": str(tiny_encoder_dir), "WELLCHOSEN_EMBEDDING_BACKEND": "onnx-int8"}
    return get_encoder()


@pytest.fixture
def filter_rules(db):
    """The paper's filter rules (version 1), which a migration makes and an earlier test's flush
    may have removed (these tests run with transaction=True)."""
    from annotation.models import FilterRules

    return FilterRules.objects.get_or_create(version=1, defaults={"note": "Sato et al. (ACL 2020) §3.1 defaults"})[0]
