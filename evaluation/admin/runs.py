"""What the admins of system runs share (a system on a test set, on a pair set, on a dataset's
contexts: SystemRun): the toy-model note, the job link, the permission to run, and the actions that
run or resume and cancel the selected runs; each admin says how one of its runs starts."""

from django.contrib import admin, messages

from core.admin.helpers import ReadOnlyAdmin, job_link_html, readable_result_html
from core.errors import UserError
from core.models import Job
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


class SystemRunAdmin(ToyModelNoteMixin, ReadOnlyAdmin):
    """Subclasses set ``run_permission`` (adding, running and cancelling runs need it) and
    ``run_start`` (the service call that runs or resumes one run)."""

    run_permission: str
    actions = ["run_selected", "cancel_selected"]

    def run_start(self, run, *, user) -> Job | None:
        """Start (or resume) ``run`` through its service: its job, None when there is nothing to do."""
        raise NotImplementedError

    def startable_runs(self, queryset):
        """The selected runs the run action starts."""
        return queryset.select_related("system")

    def has_add_permission(self, request):
        return request.user.has_perm(self.run_permission)

    def has_run_permission(self, request) -> bool:
        """Running and cancelling (the actions): the permission to add runs."""
        return request.user.has_perm(self.run_permission)

    @admin.display(description="job")
    def job_link(self, obj):
        return job_link_html(obj.job_id)

    @admin.action(description="Run or resume the selected %(verbose_name_plural)s", permissions=["run"])
    def run_selected(self, request, queryset):
        started = 0
        for run in self.startable_runs(queryset):
            try:
                job = self.run_start(run, user=request.user)
            except UserError as exc:
                messages.error(request, f"{run}: {exc}")
            else:
                started += job is not None
        messages.info(request, f"{started} {self.model._meta.verbose_name} job(s) started.")

    @admin.action(description="Cancel the selected %(verbose_name_plural)s", permissions=["run"])
    def cancel_selected(self, request, queryset):
        for job_id in queryset.exclude(job__isnull=True).values_list("job_id", flat=True):
            job_cancel(job_id=job_id)
        messages.info(request, "Cancellation requested.")


class ScoringRunAdmin(SystemRunAdmin):
    """A run that scores and summarises (ScoringRun): the summary's columns and page."""

    readonly_fields = ["status", "job_link", "system_version", "system_revision", "error", "finished_at", "report"]
    exclude = ["summary", "job"]

    @admin.display(description="accuracy")
    def accuracy(self, obj):
        value = obj.summary.get("accuracy")
        return "" if value is None else number(value)

    @admin.display(description="95 % CI")
    def ci95(self, obj):
        ci = obj.summary.get("ci95")
        return "" if not ci else interval(ci)

    @admin.display(description="chance")
    def chance(self, obj):
        """What picking at random scores on the same questions: the yardstick of the accuracy."""
        value = obj.summary.get("chance")
        return "" if value is None else number(value)

    @admin.display(description="summary")
    def report(self, obj):
        return readable_result_html(obj.summary)
