"""Helpers shared by the admin views that start background jobs."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from core.job_registry import JobParams
from core.services.jobs import job_create


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
