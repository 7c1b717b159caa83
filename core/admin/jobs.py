from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from core.models import Job, JobShard
from core.services.jobs import job_cancel, jobs_resend_pending

from .helpers import ReadOnlyAdmin


class JobShardInline(admin.TabularInline):
    """A sharded job's shards as recorded (the job page shows them live): read only, since only
    the workers that claim them write them."""

    model = JobShard
    extra = 0
    can_delete = False
    fields = ["stage", "number", "status", "attempts", "worker", "done_count", "total_count", "failed_count"]
    fields += ["params", "started_at", "heartbeat_at", "finished_at", "error", "result"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "kind_label",
        "status",
        "progress",
        "done_count",
        "total_count",
        "created_by",
        "created_at",
        "finished_at",
        "status_page",
    ]
    list_filter = ["status", "kind"]
    list_select_related = ["created_by"]
    readonly_fields = [f.name for f in Job._meta.fields] + ["status_page"]
    actions = ["cancel_jobs", "resend_jobs"]
    inlines = [JobShardInline]

    @admin.display(description="kind", ordering="kind")
    def kind_label(self, obj):
        return obj.kind_label

    @admin.display(description="")
    def status_page(self, obj):
        return format_html('<a href="{}">status page</a>', reverse("job-detail", args=[obj.pk]))

    def has_run_permission(self, request) -> bool:
        """Cancelling and resending jobs (the actions): the change permission on jobs."""
        return request.user.has_perm("core.change_job")

    @admin.action(description="Cancel the selected jobs", permissions=["run"])
    def cancel_jobs(self, request, queryset):
        for job_id in queryset.values_list("pk", flat=True):
            job_cancel(job_id=job_id)
        messages.info(request, "Cancellation requested.")

    @admin.action(description="Send the selected pending jobs to the workers again", permissions=["run"])
    def resend_jobs(self, request, queryset):
        # For a job whose message was lost (broker down when it was created); a job that is
        # already running or finished ignores the extra message.
        pending = jobs_resend_pending(job_ids=list(queryset.values_list("pk", flat=True)))
        messages.info(request, f"{len(pending)} pending job(s) sent again.")
