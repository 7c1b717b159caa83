"""Admin of pair evaluations: a system's correctness on a set of contrastive pairs."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.urls import reverse

from core.admin.helpers import render_form
from core.errors import UserError
from evaluation.admin.runs import ScoringRunAdmin
from evaluation.models import PairEvaluation, System
from evaluation.scoring.backends import scoring_kinds
from evaluation.services.pair_evaluations import pair_evaluation_start
from pairs.models import PairSet


class PairEvaluationStartForm(forms.Form):
    pair_set = forms.ModelChoiceField(queryset=PairSet.objects.all(), label="pair set")
    system = forms.ModelChoiceField(queryset=System.objects.filter(kind__in=scoring_kinds()))


@admin.register(PairEvaluation)
class PairEvaluationAdmin(ScoringRunAdmin):
    run_permission = "evaluation.add_pairevaluation"
    list_display = [
        "id",
        "system",
        "pair_set",
        "status",
        "pairs",
        "accuracy",
        "ci95",
        "chance",
        "toy_model_note",
        "job_link",
        "finished_at",
    ]
    list_filter = ["status", "system", "pair_set"]
    list_select_related = ["system", "pair_set", "job"]
    readonly_fields = ["system", "pair_set", *ScoringRunAdmin.readonly_fields]

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
        return super().accuracy(obj)

    def startable_runs(self, queryset):
        return queryset.select_related("system", "pair_set")

    def run_start(self, run, *, user):
        _, job = pair_evaluation_start(pair_set_name=run.pair_set.name, system_name=run.system.name, created_by=user)
        return job
