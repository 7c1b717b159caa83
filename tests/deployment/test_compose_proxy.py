"""The reverse proxy docker-compose.yml puts in front of web, and login throttling behind it: the
number of proxies web trusts (WELLCHOSEN_TRUSTED_PROXIES) is the number the compose file puts
between a client and web, so each client is counted at its own address and none can choose one."""

import re

import pytest
import yaml
from django.test import Client

from tests.deployment.compose_runner import COMPOSE_FILE, REPO_ROOT
from tests.factories import UserFactory

PASSWORD = "right-password-1"
PROXY_ADDRESS = "172.18.0.9"  # the proxy container's address on the compose network: every request's REMOTE_ADDR


def raw_compose() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def trusted_proxies_default() -> int:
    """The value compose gives WELLCHOSEN_TRUSTED_PROXIES when the environment does not set it."""
    value = raw_compose()["services"]["web"]["environment"]["WELLCHOSEN_TRUSTED_PROXIES"]
    match = re.fullmatch(r"\$\{WELLCHOSEN_TRUSTED_PROXIES:-(\d+)\}", str(value))
    return int(match.group(1) if match else value)


def caddy_upstreams(service: dict) -> list[str]:
    """The services a Caddy service forwards to (its Caddyfile's reverse_proxy targets)."""
    for volume in service.get("volumes", []):
        source, _, target = str(volume).partition(":")
        if target.startswith("/etc/caddy/Caddyfile"):
            text = (REPO_ROOT / source).read_text()
            return re.findall(r"^\s*reverse_proxy\s+(?:https?://)?([\w.-]+):\d+", text, re.MULTILINE)
    return []


def proxies_in_front_of_web() -> set[int]:
    """For every service that publishes a port, how many proxies a request passes on its way to web."""
    services = raw_compose()["services"]

    def hops(name: str, seen: tuple[str, ...]) -> set[int]:
        if name == "web":
            return {0}
        if name in seen or name not in services:
            return set()
        return {n + 1 for upstream in caddy_upstreams(services[name]) for n in hops(upstream, (*seen, name))}

    return {n for name, service in services.items() if service.get("ports") for n in hops(name, ())}


def test_web_publishes_no_port_so_every_request_comes_through_the_proxy():
    # a client that reached web directly could write any X-Forwarded-For and pick its address
    assert not raw_compose()["services"]["web"].get("ports")


def test_the_trusted_proxies_default_is_the_number_of_proxies_in_front_of_web():
    # TLS is terminated by a proxy (web runs production settings with secure cookies over plain
    # HTTP), so there is at least one, and every way in passes the same number
    assert proxies_in_front_of_web() == {trusted_proxies_default()}
    assert trusted_proxies_default() >= 1


def test_the_proxy_serves_the_site_over_tls_and_forwards_to_web():
    proxy = raw_compose()["services"]["proxy"]
    assert caddy_upstreams(proxy) == ["web"]
    assert any(str(port).endswith(":443") for port in proxy["ports"])


# --------------------------------------------------------------------------- login throttling behind it


@pytest.fixture
def behind_the_compose_proxy(settings):
    settings.WELLCHOSEN_TRUSTED_PROXIES = trusted_proxies_default()
    settings.AXES_FAILURE_LIMIT = 5
    return settings


@pytest.fixture
def rosa(db):
    return UserFactory(username="rosa", password=PASSWORD, is_staff=True)


def log_in_through_the_proxy(client_address: str, password: str, *, sent: str | None = None):
    """A login from ``client_address`` through the compose file's proxies. Caddy writes the client's
    address to X-Forwarded-For; a proxy that appends it instead passes on what the client ``sent``
    before it, which is the worst case this takes."""
    forwarded = ", ".join(part for part in (sent, client_address) if part)
    forwarded = ", ".join([forwarded, *[PROXY_ADDRESS] * (trusted_proxies_default() - 1)])
    return Client(REMOTE_ADDR=PROXY_ADDRESS, HTTP_X_FORWARDED_FOR=forwarded).post(
        "/accounts/login/", {"username": "rosa", "password": password}
    )


def test_five_failures_lock_the_user_at_that_client_address_only(behind_the_compose_proxy, rosa):
    for _ in range(5):
        log_in_through_the_proxy("203.0.113.9", "wrong")
    assert log_in_through_the_proxy("203.0.113.9", PASSWORD).status_code == 429
    assert log_in_through_the_proxy("198.51.100.7", PASSWORD).status_code == 302


def test_an_x_forwarded_for_the_client_sends_does_not_choose_its_address(behind_the_compose_proxy, rosa):
    # the attacker sends a fresh address with every guess; it is counted at its real one all the same
    for n in range(5):
        log_in_through_the_proxy("203.0.113.9", "wrong", sent=f"192.0.2.{n + 1}")
    assert log_in_through_the_proxy("203.0.113.9", PASSWORD, sent="192.0.2.200").status_code == 429


def test_another_clients_address_named_by_an_attacker_is_not_locked(behind_the_compose_proxy, rosa):
    for _ in range(5):
        log_in_through_the_proxy("203.0.113.9", "wrong", sent="198.51.100.7")
    assert log_in_through_the_proxy("198.51.100.7", PASSWORD).status_code == 302
