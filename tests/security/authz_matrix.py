"""The authorization matrix's machinery: every URL pattern of the resolver, a real URL for each one
(its kwargs filled from the world), one request per role and method, and what came back."""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from http.cookies import SimpleCookie

from django.conf import settings
from django.core.signals import got_request_exception
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern

from tests.security.authz_expectations import (
    ADMIN_MODELS,
    BAD,
    EXPECTATIONS,
    FORBIDDEN,
    LOGIN,
    NOT_ALLOWED,
    NOT_FOUND,
    OK,
    REDIRECT,
    Expect,
    admin_model_expect,
)
from tests.security.authz_world import HIT_ID, World

EXPECTATIONS_FILE = "tests/security/authz_expectations.py"
ADMIN_PAGES = {"changelist", "add", "history", "delete", "change"}
SERVER_ERROR = "5xx"


@dataclass(frozen=True)
class Route:
    key: str  # the URL name with its namespace ("admin:index"), or namespace:route for unnamed ones
    route: str  # the whole route, prefixes included ("admin/auth/group/<path:object_id>/")
    pattern: URLPattern

    @property
    def is_regex(self) -> bool:
        return isinstance(self.pattern.pattern, RegexPattern)


def routes() -> list[Route]:
    """Every URL pattern the project serves, the admin's and every app's, walked from the root."""

    def walk(resolver: URLResolver, prefix: str, namespace: str) -> Iterator[Route]:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                inner = ":".join(n for n in (namespace, entry.namespace) if n)
                yield from walk(entry, prefix + str(entry.pattern), inner)
            else:
                route = prefix + str(entry.pattern)
                name = entry.name or str(entry.pattern)
                yield Route(key=f"{namespace}:{name}" if namespace else name, route=route, pattern=entry)

    return list(walk(get_resolver(), "", ""))


_ADMIN_MODEL_ROUTE = re.compile(r"^admin/(?P<model>\w+/\w+)/(?:(?P<object><path:object_id>/))?(?P<page>\w+/)?$")


def admin_model_page(route: Route) -> tuple[str, str] | None:
    """(model, page) for a standard ModelAdmin page, e.g. ("crowd/crowdbatch", "change")."""
    match = _ADMIN_MODEL_ROUTE.match(route.route)
    if not match or not route.key.startswith("admin:"):
        return None
    page = (match["page"] or "").rstrip("/")
    if match["object"]:
        page = page or "redirect"
        if page not in ("history", "delete", "change", "redirect"):
            return None
    else:
        page = page or "changelist"
        if page not in ("changelist", "add"):
            return None
    return match["model"], page


def expectation(route: Route) -> Expect:
    """The table's entry for the route; a route without one fails with what to add where."""
    if route.key in EXPECTATIONS:
        return EXPECTATIONS[route.key]
    model_page = admin_model_page(route)
    if model_page and model_page[0] in ADMIN_MODELS:
        return admin_model_expect(model_page[1], ADMIN_MODELS[model_page[0]])
    where = f"ADMIN_MODELS[{model_page[0]!r}]" if model_page else f"EXPECTATIONS[{route.key!r}]"
    raise LookupError(
        f"URL pattern {route.route!r} ({route.key}) has no expectation: add {where} to {EXPECTATIONS_FILE} "
        "saying which roles may open it (and fill its URL kwargs in authz_matrix.url_values if it has new ones)"
    )


def url_values(world: World) -> dict[str, object]:
    """What each URL kwarg is filled with, by name; admin pk/object_id come from the route's model."""
    return {
        "assignment_id": world.values["assignment_id"],
        "annotator_id": world.values["annotator_id"],
        "invitation_id": world.values["invitation_id"],
        "job_id": world.values["job_id"],
        "id": world.users["annotator_a"].pk,  # admin/auth/user/<id>/password/
        "kind": "tsv",  # admin/testsets/testset/<pk>/download/<kind>/
        "content_type_id": world.values["content_type_id"],
        "pair_id": world.values["pair_id"],
    }


def _kwarg(route: Route, name: str, world: World) -> object:
    if name == "token":
        return {
            "invite-accept": world.values["invite_token"],
            "crowd-unit": world.values["unit_token"],
            "crowd-link": world.values["link_token"],
            "crowd-link-next": world.values["link_token"],
        }[route.key]
    if name == "name":  # a dataset's name on the dashboard, a campaign's under /campaigns/, a pair set's
        if route.key.startswith("pairs-"):
            return world.values["pair_set"]
        return world.values["campaign"] if route.key.startswith("campaign-") else world.values["dataset_a"].name
    if name in ("pk", "object_id"):
        model = route.route.split("/")[1:3]
        if route.key == "admin:view_on_site":
            return world.values["testset_id"]
        return world.objects[".".join(model)].pk
    values = url_values(world)
    if name not in values:
        raise LookupError(
            f"URL kwarg {name!r} of {route.route!r} ({route.key}): add a value to authz_matrix.url_values"
        )
    return values[name]


def url_for(route: Route, world: World) -> str:
    if route.is_regex:
        if route.key == "admin:app_list":
            return reverse("admin:app_list", kwargs={"app_label": "annotation"})
        if route.key == "admin:(?P<url>.*)$":
            return "/admin/authz-no-such-page/"
        raise LookupError(
            f"regex URL pattern {route.route!r} ({route.key}): add how to build it to authz_matrix.url_for"
        )
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(_kwarg(route, m[1], world)), route.route)
    return "/" + path + QUERIES.get(route.key, "")


# Query strings some pages need to reach their content (without them they answer 403 for everyone).
QUERIES = {
    "crowd-mturk": f"?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId={HIT_ID}",
    "crowd-link": "?worker=AUTHZWORKER2",
}

_LOGIN_PATHS = ("/accounts/login/", "/admin/login/")


@dataclass
class Response:
    status: int
    location: str
    body: str
    error: str  # the exception's repr where the view raised

    @property
    def outcome(self) -> str:
        if self.status >= 500:
            return SERVER_ERROR
        if 300 <= self.status < 400:
            return LOGIN if self.location.split("?")[0].endswith(_LOGIN_PATHS) else REDIRECT
        if 200 <= self.status < 300:
            return OK
        return {400: BAD, 403: FORBIDDEN, 404: NOT_FOUND, 405: NOT_ALLOWED}.get(self.status, str(self.status))


class RoleClients:
    """One signed-in session per role, made once; every request goes out with that session's cookie
    and runs in a transaction that is rolled back, so that no request changes what the next sees."""

    def __init__(self, world: World):
        self.cookies: dict[str, str] = {}
        for role, user in world.users.items():
            client = Client()
            client.force_login(user)
            self.cookies[role] = client.cookies[settings.SESSION_COOKIE_NAME].value

    def request(self, role: str, method: str, url: str) -> Response:
        client = Client(raise_request_exception=False)
        if role in self.cookies:
            client.cookies = SimpleCookie({settings.SESSION_COOKIE_NAME: self.cookies[role]})
        errors = []

        def keep(sender, request=None, **kwargs):
            import sys

            errors.append(repr(sys.exc_info()[1]))

        got_request_exception.connect(keep)
        try:
            with transaction.atomic():
                response = getattr(client, method.lower())(url)
                body = _body(response)
                transaction.set_rollback(True)
        finally:
            got_request_exception.disconnect(keep)
        return Response(response.status_code, response.get("Location", ""), body, "; ".join(errors))


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")
