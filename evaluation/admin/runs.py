"""What the admins of scoring runs share (a system on a test set, a system on a pair set): the
summary's columns, the job link and the cancel action; each admin starts its own runs."""

from django.contrib import admin, messages

from core.admin.helpers import ReadOnlyAdmin, job_link_html, readable_result_html
from core.readable import interval, number
from core.services.jobs import job_cancel
from core.toy_models import TOY_PURPOSE


class ToyModelNoteMixin:
    """The admin of a system's runs (evaluations, pair evaluations, generations): a row whose
    system is a toy model (System.toy_model) says so in the list and, first, on its page."""

    @admin.display(description="toy model")
    def toy_model_note(self, obj) -> str:
        return f"{obj.system.name} is {TOY_PURPOSE}." if obj.system.toy_model else ""

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        return ["toy_model_note", *fields] if obj is not None and obj.system.toy_model else fields


class ScoringRunAdmin(ToyModelNoteMixin, ReadOnlyAdmin):
    """Subclasses set ``run_permission``: adding, running and cancelling runs need it."""

    run_permission: str
    readonly_fields = ["status", "job_link", "system_version", "system_revision", "error", "finished_at", "report"]
    exclude = ["summary", "job"]
    actions = ["run_evaluations", "cancel_evaluations"]

    def has_add_permission(self, request):
        return request.user.has_perm(self.run_permission)

    def has_run_permission(self, request) -> bool:
        """Running and cancelling (the actions): the permission to add runs."""
        return request.user.has_perm(self.run_permission)

    @admin.display(description="accuracy")
    def accuracy(self, obj):
        value = obj.summary.get("accuracy")
        return "" if value is None else number(value)

    @admin.display(description="95 % CI")
    def ci95(self, obj):
        ci = obj.summary.get("ci95")
        return "" if not ci else interval(ci)

    @admin.display(description="job")
    def job_link(self, obj):
        return job_link_html(obj.job_id)

    @admin.display(description="summary")
    def report(self, obj):
        return readable_result_html(obj.summary)

    @admin.action(description="Cancel the selected evaluations", permissions=["run"])
    def cancel_evaluations(self, request, queryset):
        for job_id in queryset.exclude(job__isnull=True).values_list("job_id", flat=True):
            job_cancel(job_id=job_id)
        messages.info(request, "Cancellation requested.")
