"""Helpers shared by the admin views that start background jobs, and the permission check of the
pages the apps add to the admin."""

from collections.abc import Callable
from functools import wraps

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

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


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that only imports, builds and services create: viewable, never added or edited by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
