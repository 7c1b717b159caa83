# The two commands of the README: `make run` and `make test`. Everything else is set-up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# PostgreSQL pass of the test suite (skipped, with a message, when nothing answers there).
TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
STAMP := $(VENV)/.installed

.PHONY: install run test lint test-sqlite test-postgres clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("WellChosen needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,ml]'
	touch $(STAMP)

install: $(STAMP)

# Web server + Celery worker on SQLite and the filesystem broker, demo data loaded. The worker
# runs beat inside it (-B), so published crowd batches are synced every
# WELLCHOSEN_CROWD_SYNC_SECONDS (300) here too.
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	@echo "Starting the Celery worker (with beat) and the web server on http://$(HOST):$(PORT)/ (Ctrl-C stops both)"
	@$(PY) -m celery -A config worker -B -Q default,gpu --pool=solo --loglevel=INFO & worker=$$!; \
	 trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	 $(PY) manage.py runserver $(HOST):$(PORT)

test: install lint test-sqlite test-postgres

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

test-sqlite: install
	@echo "== test suite on SQLite =="
	env -u DATABASE_URL $(PY) -m pytest

test-postgres: install
	@if $(PY) -c 'import sys, psycopg; psycopg.connect(sys.argv[1], connect_timeout=3).close()' '$(TEST_POSTGRES_URL)' 2>/dev/null; then \
	  echo "== test suite on PostgreSQL ($(TEST_POSTGRES_URL)) =="; \
	  DATABASE_URL='$(TEST_POSTGRES_URL)' $(PY) -m pytest -m "not heavy"; \
	else \
	  echo "== PostgreSQL not reachable at $(TEST_POSTGRES_URL): PostgreSQL pass skipped =="; \
	fi

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache
