# The two commands of the README: `make run` and `make test`. Everything else is set-up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# PostgreSQL pass of the test suite: this server when it answers, otherwise an embedded one
# (config.stack with-postgres). The Redis tests likewise use TEST_REDIS_URL (redis://127.0.0.1:6379)
# or an embedded Redis (tests/conftest.py).
TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
# Test processes per pass (pytest-xdist; 0: in this process). The suite spends about half of its
# time waiting on worker processes, browsers and the database, so two keep two cores busy.
# --dist load hands the tests out in collection order, so each process still runs the database
# tests before the transactional ones (whose flush drops the rows the migrations made).
TEST_PROCESSES ?= 2
PYTEST := $(PY) -m pytest -n $(TEST_PROCESSES) --dist load
STAMP := $(VENV)/.installed

.PHONY: install run test lint test-sqlite test-postgres clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("WellChosen needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@echo "installing into $(VENV) (the first run takes a few minutes; pip's output: $(VENV)/install.log)…"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@($(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[dev,ml,embedded]') > $(VENV)/install.log 2>&1 \
	  || (tail -n 40 $(VENV)/install.log; echo "installing failed: see $(VENV)/install.log"; exit 1)
	@touch $(STAMP)

install: $(STAMP)

# The production stack on this machine (config/stack.py): PostgreSQL and Redis embedded under var/
# unless DATABASE_URL / CELERY_BROKER_URL name servers, then migrate, the demo data, and the web
# server, Celery workers and beat (run_local). Their output goes to var/log/; the address and the
# demo logins are printed last, once all answer. Ctrl-C stops everything, the servers last.
run: install
	@$(PY) -m config.stack run --host $(HOST) --port $(PORT)

test: install lint test-sqlite test-postgres

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# The SQLite pass leaves out the `workers` tests (Celery worker processes sharing or taking over jobs:
# make run's workers use PostgreSQL); the PostgreSQL pass leaves out the `heavy` ones (models, real
# data, the embedded servers: the engine does not change their outcome) and every test that cannot
# reach the database (WELLCHOSEN_TEST_DATABASE_ONLY, tests/conftest.py).
test-sqlite: install
	@echo "== test suite on SQLite =="
	env -u DATABASE_URL $(PYTEST) -m "not workers"

test-postgres: install
	WELLCHOSEN_TEST_DATABASE_ONLY=1 $(PY) -m config.stack with-postgres '$(TEST_POSTGRES_URL)' -- $(PYTEST) -m "not heavy"

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache
