"""Response headers: the Content-Security-Policy on every page (crowd pages framable by MTurk only),
no inline script anywhere in our templates, and production settings that `check --deploy` passes
with HSTS for a year."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.csp import csp_directives
from tests.factories import DatasetFactory, QuestionFactory, UserFactory

PROJECT_ROOT = Path(__file__).resolve().parents[2]
APPS = ("core", "annotation", "testsets", "crowd", "retrieval", "evaluation", "config")
SITE_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
STAFF_PAGES = [
    "/",
    "/admin/",
    "/admin/annotation/dataset/",
    "/admin/annotation/dataset/add/",
    "/admin/auth/user/",
    "/dashboard/",
    "/dashboard/policy/",
    "/jobs/",
    "/campaigns/",
    "/healthz",
    "/jobs/999999/status.json",
    "/no-such-page/",
]
ANONYMOUS_PAGES = ["/accounts/login/", "/admin/login/", "/annotate/"]


@pytest.fixture
def staff_client(client, db):
    DatasetFactory(name="policy")
    QuestionFactory(dataset__name="policy")
    client.force_login(UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("path", STAFF_PAGES)
def test_every_page_of_the_site_has_the_site_policy(staff_client, path):
    response = staff_client.get(path)
    assert response.status_code in (200, 302, 404)
    assert csp_directives(response["Content-Security-Policy"]) == SITE_POLICY


@pytest.mark.parametrize("path", ANONYMOUS_PAGES)
def test_pages_before_login_have_the_site_policy(client, db, path):
    assert csp_directives(client.get(path)["Content-Security-Policy"]) == SITE_POLICY


def test_the_locked_out_page_has_the_site_policy(client, db, settings):
    settings.AXES_FAILURE_LIMIT = 1
    response = client.post("/accounts/login/", {"username": "nobody", "password": "wrong"})
    assert response.status_code == 429
    assert csp_directives(response["Content-Security-Policy"]) == SITE_POLICY


def test_a_crowd_page_is_framable_by_the_submit_hosts_only(client, db, settings):
    settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS = ["https://workersandbox.mturk.com"]
    settings.WELLCHOSEN_CROWD_FRAME_HOSTS = ["https://worker.mturk.com", "https://workersandbox.mturk.com"]
    response = client.get("/crowd/u/not-a-token/")
    assert response.status_code == 403
    policy = csp_directives(response["Content-Security-Policy"])
    assert policy == {
        **SITE_POLICY,
        "frame-ancestors": ["'self'", "https://workersandbox.mturk.com", "https://worker.mturk.com"],
    }


def test_the_settings_hold_the_policy_the_tests_expect(settings):
    assert {k: list(v) for k, v in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"].items()} == SITE_POLICY


def test_nothing_in_the_apps_writes_its_own_policy_or_exempts_a_page():
    """A view that set the header itself would replace the whole site policy with its own."""
    offenders = [
        f"{path.relative_to(PROJECT_ROOT)}:{n}"
        for app in APPS
        for path in (PROJECT_ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""["']Content-Security-Policy["']|csp_exempt""", line)
    ]
    assert offenders == []


# --------------------------------------------------------------------------- templates

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
JAVASCRIPT_URL = re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", re.IGNORECASE)
# written to a file by `manage.py report` and opened from disk, never served by the site
NOT_SERVED = {"templates/campaigns/standalone.html"}


def templates() -> list[Path]:
    return [
        path
        for folder in [PROJECT_ROOT / "templates", *(PROJECT_ROOT / app / "templates" for app in APPS)]
        if folder.is_dir()
        for path in folder.rglob("*.html")
        if str(path.relative_to(PROJECT_ROOT)) not in NOT_SERVED
    ]


def test_the_templates_are_found():
    assert len(templates()) >= 25


@pytest.mark.parametrize("pattern", [INLINE_SCRIPT, EVENT_HANDLER, JAVASCRIPT_URL], ids=["script", "on*=", "js-url"])
def test_no_template_has_script_that_the_policy_would_block(pattern):
    found = [
        f"{path.relative_to(PROJECT_ROOT)}: {match.group(0)}"
        for path in templates()
        for match in pattern.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_patterns_catch_what_they_look_for():
    assert INLINE_SCRIPT.search("<script>document.forms[0].submit()</script>")
    assert not INLINE_SCRIPT.search("<script src=\"{% static 'js/a.js' %}\" defer></script>")
    assert EVENT_HANDLER.search('<input readonly onfocus="this.select()">')
    assert JAVASCRIPT_URL.search('<a href="javascript:go()">')


# --------------------------------------------------------------------------- production settings


def production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "WELLCHOSEN_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="wellchosen.example.org",
        **extra,
    )
    return env


@pytest.mark.slow
def test_check_deploy_is_clean_with_production_settings(tmp_path):
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=production_env(WELLCHOSEN_DATA_DIR=str(tmp_path)),
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "31536000 True False"),
        ({"DJANGO_HSTS_SECONDS": "600", "DJANGO_HSTS_INCLUDE_SUBDOMAINS": "0"}, "600 False False"),
        ({"DJANGO_HSTS_PRELOAD": "1"}, "31536000 True True"),
    ],
)
def test_production_sends_hsts_for_a_year_unless_told_otherwise(tmp_path, env, expected):
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD)"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); " + code],
        env=production_env(WELLCHOSEN_DATA_DIR=str(tmp_path), **env),
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == expected, out.stderr
