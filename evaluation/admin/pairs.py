"""Admin of pair evaluations: a system's correctness on a set of contrastive pairs."""

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from core.admin.helpers import ReadOnlyAdmin, render_form
from core.errors import UserError
from core.services.jobs import job_cancel
from evaluation.models import PairEvaluation, System
from evaluation.services.pair_evaluations import pair_evaluation_start
from pairs.models import PairSet


class PairEvaluationStartForm(forms.Form):
    pair_set = forms.ModelChoiceField(queryset=PairSet.objects.all(), label="pair set")
    system = forms.ModelChoiceField(queryset=System.objects.exclude(kind="external"))


@admin.register(PairEvaluation)
class PairEvaluationAdmin(ReadOnlyAdmin):
    list_display = ["id", "system", "pair_set", "status", "pairs", "accuracy", "ci95", "job_link", "finished_at"]
    list_filter = ["status", "system", "pair_set"]
    list_select_related = ["system", "pair_set", "job"]
    readonly_fields = ["system", "pair_set", "status", "job_link", "system_version", "error", "finished_at", "report"]
    exclude = ["summary", "job"]
    actions = ["run_evaluations", "cancel_evaluations"]

    def has_add_permission(self, request):
        return request.user.has_perm("evaluation.add_pairevaluation")

    def has_run_permission(self, request) -> bool:
        """Running and cancelling pair evaluations (the actions): the permission to add them."""
        return request.user.has_perm("evaluation.add_pairevaluation")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):  # replaces Django's add_view, which checks it
            raise PermissionDenied
        form = PairEvaluationStartForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                evaluation, job = pair_evaluation_start(
                    pair_set_name=form.cleaned_data["pair_set"].name,
                    system_name=form.cleaned_data["system"].name,
                    created_by=request.user,
                )
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                if job is None:
                    messages.info(request, "This system was already evaluated on every accepted pair of this set.")
                    return redirect(reverse("admin:evaluation_pairevaluation_change", args=[evaluation.pk]))
                return redirect(reverse("job-detail", args=[job.pk]))
        return render_form(
            request,
            self,
            form=form,
            title="Evaluate a system on contrastive pairs",
            intro="The system is correct on a pair when the correct response gets the lower loss. Only pairs a "
            "reviewer accepted (and the annotators did not drop) are evaluated. The job goes to the GPU queue and "
            "can be cancelled and resumed; pairs accepted later are scored by running it again.",
        )

    @admin.display(description="pairs")
    def pairs(self, obj):
        return obj.summary.get("n", "")

    @admin.display(description="correctness")
    def accuracy(self, obj):
        value = obj.summary.get("accuracy")
        return "" if value is None else f"{value:.3f}"

    @admin.display(description="95 % CI")
    def ci95(self, obj):
        ci = obj.summary.get("ci95")
        return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"

    @admin.display(description="job")
    def job_link(self, obj):
        if obj.job_id is None:
            return ""
        return format_html('<a href="{}">job #{}</a>', reverse("job-detail", args=[obj.job_id]), obj.job_id)

    @admin.display(description="summary")
    def report(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.summary, indent=2, sort_keys=True))

    @admin.action(description="Run or resume the selected pair evaluations", permissions=["run"])
    def run_evaluations(self, request, queryset):
        started = 0
        for evaluation in queryset.select_related("system", "pair_set"):
            try:
                _, job = pair_evaluation_start(
                    pair_set_name=evaluation.pair_set.name, system_name=evaluation.system.name, created_by=request.user
                )
            except UserError as exc:
                messages.error(request, f"{evaluation}: {exc}")
            else:
                started += job is not None
        messages.info(request, f"{started} pair evaluation job(s) started.")

    @admin.action(description="Cancel the selected pair evaluations", permissions=["run"])
    def cancel_evaluations(self, request, queryset):
        for job_id in queryset.exclude(job__isnull=True).values_list("job_id", flat=True):
            job_cancel(job_id=job_id)
        messages.info(request, "Cancellation requested.")
