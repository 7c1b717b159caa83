"""A server never renders Django's debug page in production: the production settings refuse
DJANGO_DEBUG, and the local settings (what runs when DJANGO_SETTINGS_MODULE is forgotten) turn
debug pages on by default only while the site answers to loopback names alone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECRET = "a-long-random-production-secret-for-this-test-only-0123456789"


def python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean | env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.parametrize("value", ["1", "true", "on"])
def test_production_settings_refuse_debug_from_the_environment(value):
    done = python(
        "import config.settings.production",
        DJANGO_SECRET_KEY=SECRET,
        DJANGO_DEBUG=value,
        DJANGO_SETTINGS_MODULE="config.settings.production",
    )
    assert done.returncode != 0 and "DJANGO_DEBUG" in done.stderr


def test_production_settings_have_debug_off(tmp_path):
    done = python(
        "import config.settings.production as s; print(s.DEBUG)",
        DJANGO_SECRET_KEY=SECRET,
        DJANGO_DEBUG="0",
        WELLCHOSEN_DATA_DIR=str(tmp_path),
    )
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


def local_debug(tmp_path, **env: str) -> str:
    done = python(
        "import config.settings.local as s; print(s.DEBUG)",
        DJANGO_SETTINGS_MODULE="config.settings.local",
        WELLCHOSEN_DATA_DIR=str(tmp_path),
        **env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_local_settings_show_debug_pages_on_this_machine_only(tmp_path):
    assert local_debug(tmp_path) == "True"


def test_local_settings_for_a_real_host_name_show_no_debug_pages(tmp_path):
    assert local_debug(tmp_path, DJANGO_ALLOWED_HOSTS="wellchosen.example.org,localhost") == "False"


def test_debug_pages_for_a_real_host_name_must_be_asked_for(tmp_path):
    assert local_debug(tmp_path, DJANGO_ALLOWED_HOSTS="wellchosen.example.org", DJANGO_DEBUG="1") == "True"
