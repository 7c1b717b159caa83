"""Login throttling's hooks into django-axes: the address a request came from
(``AXES_CLIENT_IP_CALLABLE``), the username it is counted under (``AXES_USERNAME_CALLABLE``) and
the page a locked-out login gets (``AXES_LOCKOUT_CALLABLE``).

Behind reverse proxies ``REMOTE_ADDR`` is the nearest proxy's address, the same for every visitor,
and each proxy appends the address it saw to ``X-Forwarded-For``. A client may send any
``X-Forwarded-For`` of its own, so only the entries that the deployment's own proxies appended are
evidence: the client's address is the entry ``WELLCHOSEN_TRUSTED_PROXIES`` places from the right.
With no trusted proxy (the default) the header is ignored.
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.WELLCHOSEN_TRUSTED_PROXIES
    if proxies <= 0:
        return remote
    header = "HTTP_" + settings.WELLCHOSEN_CLIENT_IP_HEADER.upper().replace("-", "_")
    forwarded = [part.strip() for part in request.META.get(header, "").split(",") if part.strip()]
    if len(forwarded) < proxies:  # the request did not pass through every proxy
        return remote
    candidate = forwarded[-proxies]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:  # a proxy that writes something else: the address stored must be one
        return remote


# The length of axes' username columns. No account has a longer name (the user model allows 150),
# but the login form passes any length on, and PostgreSQL refuses a value longer than its column.
USERNAME_CHARS = 255


def login_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """The username a login tried, cut to what the attempts table holds."""
    source = credentials if credentials is not None else request.POST
    username = source.get("username")
    return None if username is None else str(username)[:USERNAME_CHARS]


def locked_out_response(request: HttpRequest, response: HttpResponse | None = None, credentials=None) -> HttpResponse:
    """429 and a page that says why, for how long, and who can lift it (on either login page)."""
    cooloff = settings.AXES_COOLOFF_TIME
    context = {
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": round(cooloff.total_seconds() / 60) if cooloff else None,
    }
    return render(request, "registration/locked_out.html", context, status=429)
