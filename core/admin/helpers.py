"""Helpers shared by the admin: the base of every ModelAdmin of ours, the views that start
background jobs, and the permission check of the pages the apps add to the admin."""

import re
from collections.abc import Callable
from functools import wraps

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.views.main import SEARCH_VAR
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from core.job_registry import JobParams
from core.services.jobs import job_create


def permission_required_page(view: Callable, *, read: str, write: str | None = None) -> Callable:
    """A page an app adds to the admin (get_urls), behind the model permission it needs: ``read``
    to GET it, ``write`` (default: ``read``) to POST to it. The admin site's wrapper (admin_view)
    lets every staff account in, and Django checks model permissions on its own pages only: without
    this, staff with no permission could download a test set or publish a crowd batch."""

    @wraps(view)
    def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        needed = read if request.method in ("GET", "HEAD") else (write or read)
        if not request.user.has_perm(needed):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return checked


def job_link_html(job_id: int | None) -> str:
    """A link to a job's page (``job #12``) for an admin column; empty without a job."""
    if job_id is None:
        return ""
    return format_html('<a href="{}">job #{}</a>', reverse("job-detail", args=[job_id]), job_id)


def readable_result_html(result: dict) -> str:
    """A result or summary dict for an admin page: its facts and nested objects as tables with
    readable numbers (core.readable), the raw JSON in a <details> element."""
    return render_to_string("includes/readable_result.html", {"result": result, "raw": True})


def start_job(request: HttpRequest, *, params: JobParams) -> HttpResponse:
    """Start the job for the researcher and show its status page."""
    job = job_create(params=params, created_by=request.user)
    return redirect(reverse("job-detail", args=[job.pk]))


def render_form(
    request: HttpRequest, model_admin: admin.ModelAdmin, *, form, title: str, intro: str = ""
) -> HttpResponse:
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": title,
        "intro": intro,
        "form": form,
    }
    return TemplateResponse(request, "admin/wellchosen/form.html", context)


# No one searches for more; SQLite refuses a LIKE pattern over 50,000 bytes.
MAX_SEARCH_CHARS = 1000
# Every integer column of every database we run on fits a signed 64-bit integer.
DATABASE_INTEGERS = range(-(2**63), 2**63)
_INTEGER = re.compile(r"-?[0-9]+")


class CheckedInputAdmin(admin.ModelAdmin):
    """The base of every ModelAdmin of ours: its list page checks what a request brings before
    Django uses it. The rows an action is asked for must be ids, a number in the query must fit the
    database's integers and a search is at most MAX_SEARCH_CHARS; otherwise the list comes back
    with a message (as Django answers an action without rows), never a server error."""

    def changelist_view(self, request, extra_context=None):
        problem = self._request_problem(request)
        if problem:
            self.message_user(request, problem, messages.ERROR)
            return HttpResponseRedirect(request.path)
        return super().changelist_view(request, extra_context)

    def _request_problem(self, request: HttpRequest) -> str:
        if request.method == "POST" and "action" in request.POST:
            pk = self.model._meta.pk
            for value in request.POST.getlist(ACTION_CHECKBOX_NAME):
                try:
                    row = pk.to_python(value)
                except ValidationError:
                    row = None
                if row is None or (isinstance(row, int) and row not in DATABASE_INTEGERS):
                    return "The selected rows are not ids of this list; nothing was changed."
        if len(request.GET.get(SEARCH_VAR, "")) > MAX_SEARCH_CHARS:
            return f"A search is at most {MAX_SEARCH_CHARS} characters."
        for name, values in request.GET.lists():
            if any(_INTEGER.fullmatch(v) and (len(v) > 20 or int(v) not in DATABASE_INTEGERS) for v in values):
                return f"The filter {name} is a number beyond the database's integers."
        return ""


class ReadOnlyAdmin(CheckedInputAdmin):
    """Rows that only imports, builds and services create: viewable, never added or edited by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
