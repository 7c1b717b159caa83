"""The authorization matrix: every URL pattern of the resolver x every role x GET and POST (and PUT,
PATCH, DELETE on our own pages), with real ids, against the table in authz_expectations.py.

A pattern fails when it has no entry in the table, when a response is a server error, when a role
gets another outcome than the table's (a denied role let in is a leak), or when a page shows a
secret marker of the world to a role that may not read it."""

import pytest

from tests.security.authz_expectations import DENIED, EXPECTATIONS, OK, SECRET_READERS
from tests.security.authz_matrix import (
    SERVER_ERROR,
    RoleClients,
    admin_model_page,
    expectation,
    routes,
    url_for,
)
from tests.security.authz_world import ROLES, world_kept

ROUTES = routes()
EXTRA_METHODS = ("PUT", "PATCH", "DELETE")


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_kept(django_db_blocker) as built:
        yield built, RoleClients(built)


def _leaks(body: str, key: str, role: str) -> list[str]:
    found = []
    for marker, (readers, pages) in SECRET_READERS.items():
        if marker in body and role not in readers and (key, role) not in pages:
            found.append(marker)
    return found


def _check(route, role: str, method: str, wanted, response) -> list[str]:
    where = f"{role:12} {method:6} {route.route}"
    outcome = response.outcome
    if outcome == SERVER_ERROR:
        return [f"{where}: server error {response.status} {response.error}"]
    problems = []
    allowed = wanted if isinstance(wanted, frozenset) else {wanted}
    if outcome not in allowed:
        kind = "LEAK" if allowed <= DENIED and outcome == OK else "unexpected"
        problems.append(f"{where}: {kind}: got {outcome} ({response.status} {response.location}), table says {wanted}")
    if leaked := _leaks(response.body, route.key, role):
        problems.append(f"{where}: LEAK: the page shows {', '.join(leaked)}")
    return problems


@pytest.mark.parametrize("route", ROUTES, ids=[r.key for r in ROUTES])
def test_every_role_gets_what_the_table_says(db, world, route):
    built, clients = world
    expect = expectation(route)
    url = url_for(route, built)
    problems = []
    for role in ROLES:
        for method, wanted in (("GET", expect.get[role]), ("POST", expect.post[role])):
            problems += _check(route, role, method, wanted, clients.request(role, method, url))
        if route.key.startswith("admin:"):
            continue
        denied = {expect.get[role], expect.post[role]} <= DENIED
        for method in EXTRA_METHODS:  # never a 5xx; never open where both GET and POST are closed
            response = clients.request(role, method, url)
            wanted = frozenset(DENIED) if denied else frozenset({response.outcome} - {SERVER_ERROR})
            problems += _check(route, role, method, wanted, response)
    assert not problems, f"{len(problems)} problem(s) at {url}:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "marker, role, key",
    [
        ("GT-SECRET-A", "annotator_a", "annotate-unit"),
        ("CTX-SECRET-A", "annotator_a", "annotate-unit"),
        ("GT-SECRET-B", "annotator_b", "annotate-next"),
        ("GT-SECRET-R", "researcher", "admin:testsets_testset_download"),
        ("GT-SECRET-C", "anonymous", "crowd-unit"),
    ],
)
def test_the_secret_markers_are_on_the_pages_that_may_show_them(db, world, marker, role, key):
    """Else the matrix's search for them in every other page would find nothing whatever happens."""
    built, clients = world
    route = next(r for r in ROUTES if r.key == key)
    assert marker in clients.request(role, "GET", url_for(route, built)).body


def test_the_table_names_only_patterns_that_exist():
    keys = {r.key for r in ROUTES}
    assert set(EXPECTATIONS) - keys == set(), "entries in authz_expectations.EXPECTATIONS for URLs that are gone"


def test_the_matrix_covers_the_admin_and_every_app():
    keys = [r.key for r in ROUTES]
    assert len(ROUTES) >= 200
    assert sum(1 for r in ROUTES if admin_model_page(r)) >= 150
    for name in ("annotate-unit", "crowd-unit", "campaign-report", "job-detail", "admin:crowd_crowdbatch_plan"):
        assert name in keys
