"""Job pages (list, status, cancel, retry) and the health check."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_POST

from core.errors import UserError
from core.models import Job, JobShardStatus, JobStatus
from core.selectors import (
    job_failure,
    job_live_progress,
    job_outcome,
    job_retry_permitted,
    job_shards_live,
    jobs_recent,
    jobs_waits,
)
from core.services.job_retries import job_retry
from core.services.jobs import job_cancel


def healthz(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


@staff_member_required
@permission_required("core.view_job", raise_exception=True)
def job_list(request: HttpRequest) -> HttpResponse:
    jobs = list(jobs_recent(limit=200))
    return render(request, "jobs/list.html", {"jobs": jobs, "waits": jobs_waits(jobs=jobs)})


@staff_member_required
@permission_required("core.view_job", raise_exception=True)
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("created_by"), pk=job_id)
    failed = job.status == JobStatus.FAILED
    shards = job_shards_live(job_id=job.pk)
    return render(
        request,
        "jobs/detail.html",
        {
            "job": job,
            "live": job_live_progress(job=job),
            "outcome": job_outcome(job=job),
            "shards": shards,
            "shards_done": sum(shard["status"] == JobShardStatus.SUCCEEDED for shard in shards),
            "wait": jobs_waits(jobs=[job]).get(job.pk),
            "failure": job_failure(job=job) if failed else None,
            "can_retry": failed and job_retry_permitted(kind=job.kind, user=request.user),
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


@staff_member_required
@permission_required("core.change_job", raise_exception=True)
@require_POST
def job_retry_view(request: HttpRequest, job_id: int) -> HttpResponse:
    """Retry a failed job (core.services.job_retries); a second click finds it pending and sends
    nothing. 403 without the jobs' change permission (as cancelling) or the permission to start its
    kind, 400 for a kind no installed app declares."""
    job = get_object_or_404(Job, pk=job_id)
    try:
        retried = job_retry(job_id=job.pk, user=request.user)
    except UserError as exc:
        return HttpResponse(f"Job #{job.pk} cannot be retried: {exc}", status=400, content_type="text/plain")
    if retried:
        messages.info(request, f"Job #{job.pk} was sent to its queue again; it resumes where its work stopped.")
    else:
        messages.info(request, f"Job #{job.pk} is no longer failed (retried already?); nothing was sent again.")
    return redirect("job-detail", job_id=job.pk)


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask every site for /favicon.ico, whatever a page links (the admin's pages link none):
    the icon, where the static files are (looked up per request: a manifest storage knows its name
    only after collectstatic)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))
