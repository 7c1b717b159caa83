"""Job pages (list, status, cancel) and the health check."""

from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core.models import Job
from core.selectors import job_live_progress, job_outcome, job_shards_live, jobs_recent
from core.services.jobs import job_cancel


def healthz(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


@staff_member_required
@permission_required("core.view_job", raise_exception=True)
def job_list(request: HttpRequest) -> HttpResponse:
    return render(request, "jobs/list.html", {"jobs": jobs_recent(limit=200)})


@staff_member_required
@permission_required("core.view_job", raise_exception=True)
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("created_by"), pk=job_id)
    return render(
        request,
        "jobs/detail.html",
        {
            "job": job,
            "live": job_live_progress(job=job),
            "outcome": job_outcome(job=job),
            "shards": job_shards_live(job_id=job.pk),
        },
    )


@staff_member_required
@permission_required("core.view_job", raise_exception=True)
def job_status_json(request: HttpRequest, job_id: int) -> JsonResponse:
    job = get_object_or_404(Job, pk=job_id)
    return JsonResponse(
        {
            "id": job.pk,
            "kind": job.kind,
            "status": job.status,
            "finished": job.is_finished,
            "error": job.error,
            "result": job.result,
            **job_live_progress(job=job),
            **job_outcome(job=job),
            "shards": job_shards_live(job_id=job.pk),
        }
    )


@staff_member_required
@permission_required("core.change_job", raise_exception=True)
@require_POST
def job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    get_object_or_404(Job, pk=job_id)
    job_cancel(job_id=job_id)
    return redirect("job-detail", job_id=job_id)
