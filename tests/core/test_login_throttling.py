"""Login throttling (django-axes) on both login pages: N failed logins for one username from one
address lock that pair out, even with the right password, until the cool-off ends."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.utils import timezone

from config.settings.base import lockout_parameters
from core.throttling import client_ip
from tests.factories import UserFactory

PASSWORD = "right-password-1"
LOGIN_PAGES = ["/accounts/login/", "/admin/login/"]
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def limits(settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    return settings.AXES_FAILURE_LIMIT


@pytest.fixture
def rosa(db):
    return UserFactory(username="rosa", password=PASSWORD, is_staff=True)


def log_in(page: str, username: str, password: str, *, ip: str = "198.51.100.7"):
    """One login from a fresh browser at ``ip``."""
    return Client(REMOTE_ADDR=ip).post(page, {"username": username, "password": password})


def fail(page: str, n: int, *, username: str = "rosa", ip: str = "198.51.100.7") -> list[int]:
    """``n`` wrong passwords; the status of each answer."""
    return [log_in(page, username, "wrong", ip=ip).status_code for _ in range(n)]


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_the_right_password_logs_in_below_the_limit(page, limits, rosa):
    fail(page, limits - 1)
    assert log_in(page, "rosa", PASSWORD).status_code == 302


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_the_nth_failure_answers_the_locked_out_page(page, limits, rosa):
    assert fail(page, limits) == [200] * (limits - 1) + [429]


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_after_n_failures_the_right_password_is_refused_with_a_429_page(page, limits, rosa):
    fail(page, limits)
    response = log_in(page, "rosa", PASSWORD)
    assert response.status_code == 429
    html = response.content.decode()
    assert 'id="locked-out"' in html and "15 minutes" in html
    assert "_auth_user_id" not in response.wsgi_request.session


def test_failures_on_one_login_page_count_on_the_other(limits, rosa):
    fail("/accounts/login/", limits - 1)
    fail("/admin/login/", 1)
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 429


def test_a_success_before_the_limit_starts_the_count_again(limits, rosa):
    fail("/accounts/login/", limits - 1)
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 302
    fail("/accounts/login/", limits - 1)
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 302


def test_another_user_at_the_same_address_is_not_locked_out(limits, rosa):
    UserFactory(username="sam", password=PASSWORD)
    fail("/accounts/login/", limits)
    assert log_in("/accounts/login/", "sam", PASSWORD).status_code == 302


def test_the_same_user_from_another_address_is_not_locked_out(limits, rosa):
    fail("/accounts/login/", limits, ip="198.51.100.7")
    assert log_in("/accounts/login/", "rosa", PASSWORD, ip="203.0.113.9").status_code == 302


def test_the_lockout_ends_with_the_cool_off(limits, rosa):
    fail("/accounts/login/", limits)
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 302


def test_without_a_cool_off_only_a_reset_unlocks(limits, rosa, settings):
    from django.core.management import call_command

    settings.AXES_COOLOFF_TIME = None
    fail("/accounts/login/", limits)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(days=30))
    response = log_in("/accounts/login/", "rosa", PASSWORD)
    assert response.status_code == 429 and "until an administrator unlocks it" in response.content.decode()
    call_command("axes_reset_username", "rosa")
    assert log_in("/accounts/login/", "rosa", PASSWORD).status_code == 302


def test_a_username_longer_than_any_account_is_counted_not_a_server_error(limits, db):
    # the login form passes any length on; PostgreSQL refuses a value longer than the column
    long_name = "x" * 300
    assert fail("/accounts/login/", limits, username=long_name) == [200] * (limits - 1) + [429]
    assert [len(name) for name in AccessAttempt.objects.values_list("username", flat=True)] == [255]


def test_a_forced_login_in_tests_is_not_throttled(limits, rosa, client):
    fail("/accounts/login/", limits, ip="127.0.0.1")
    client.force_login(rosa)
    assert client.get("/").status_code == 200


# --------------------------------------------------------------------------- the client's address


def request_from(rf, remote: str, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return rf.get("/", **extra)


def test_without_trusted_proxies_a_forwarded_header_is_ignored(rf, settings):
    settings.WELLCHOSEN_TRUSTED_PROXIES = 0
    assert client_ip(request_from(rf, "10.0.0.2", "203.0.113.9")) == "10.0.0.2"


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (1, "203.0.113.9", "203.0.113.9"),
        # a client's own X-Forwarded-For comes first; the trusted proxy appended the real address
        (1, "192.0.2.66, 203.0.113.9", "203.0.113.9"),
        (2, "192.0.2.66, 203.0.113.9, 10.1.1.1", "203.0.113.9"),
        # fewer entries than proxies: the request did not come through them
        (2, "203.0.113.9", "10.0.0.2"),
        (1, "not-an-address", "10.0.0.2"),
        (1, "", "10.0.0.2"),
    ],
)
def test_behind_trusted_proxies_the_address_is_the_one_they_appended(rf, settings, proxies, forwarded, expected):
    settings.WELLCHOSEN_TRUSTED_PROXIES = proxies
    assert client_ip(request_from(rf, "10.0.0.2", forwarded)) == expected


def test_behind_a_proxy_each_client_is_counted_at_its_own_address(limits, rosa, settings):
    settings.WELLCHOSEN_TRUSTED_PROXIES = 1

    def from_client(address: str, password: str):
        return Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=address).post(
            "/accounts/login/", {"username": "rosa", "password": password}
        )

    for _ in range(limits):
        from_client("203.0.113.9", "wrong")
    assert from_client("203.0.113.9", PASSWORD).status_code == 429
    assert from_client("198.51.100.7", PASSWORD).status_code == 302


# --------------------------------------------------------------------------- settings


def test_lockout_parameters_read_plus_as_together_and_comma_as_apart():
    assert lockout_parameters("username+ip_address") == [["username", "ip_address"]]
    assert lockout_parameters("username, ip_address") == ["username", "ip_address"]


@pytest.mark.parametrize("value", ["", "user", "username+ip", "username,,ip_address"])
def test_an_unknown_lockout_parameter_stops_start_up_with_the_variable_name(value):
    with pytest.raises(ValueError, match="WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS"):
        lockout_parameters(value)


def test_the_limits_come_from_the_environment():
    env = {
        **os.environ,
        "WELLCHOSEN_LOGIN_FAILURE_LIMIT": "7",
        "WELLCHOSEN_LOGIN_COOLOFF_MINUTES": "0",
        "WELLCHOSEN_LOGIN_LOCKOUT_PARAMETERS": "ip_address",
        "WELLCHOSEN_TRUSTED_PROXIES": "1",
    }
    code = (
        "from config.settings import base as s; "
        "print(s.AXES_ENABLED, s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME, s.AXES_LOCKOUT_PARAMETERS, "
        "s.WELLCHOSEN_TRUSTED_PROXIES)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert out.stdout.split("\n")[0] == "True 7 None ['ip_address'] 1", out.stderr


def test_the_defaults_lock_a_username_and_address_pair_after_5_failures_for_15_minutes():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WELLCHOSEN_LOGIN_")}
    code = (
        "from config.settings import base as s; "
        "print(s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME, s.AXES_LOCKOUT_PARAMETERS)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "5 0:15:00 [['username', 'ip_address']]", out.stderr
