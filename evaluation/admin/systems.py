from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.urls import reverse

from core.admin.helpers import CheckedInputAdmin, render_form
from core.errors import UserError
from core.forms import service_check
from evaluation.admin.runs import ScoringRunAdmin
from evaluation.models import Evaluation, System
from evaluation.services.evaluations import evaluation_start
from evaluation.services.systems import system_sources_check, system_toy_model_record
from testsets.models import TestSet


class SystemAdminForm(forms.ModelForm):
    """What the system runs is checked by the service that registers systems: the plugin imports, or
    the checkpoint and tokenizer resolve (a Hugging Face id is fetched now and its commit recorded).
    An unchanged hub id keeps the commit it was pinned to."""

    class Meta:
        model = System
        fields = "__all__"

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        changed, instance = set(self.changed_data), self.instance
        sources = service_check(
            system_sources_check,
            kind=data["kind"],
            checkpoint=data.get("checkpoint", ""),
            tokenizer_path=data.get("tokenizer_path", ""),
            plugin=data.get("plugin", ""),
            dtype=data["dtype"],
            compile_model=data.get("compile_model", False),
            chat_template=data.get("chat_template", False),
            checkpoint_revision="" if "checkpoint" in changed else instance.checkpoint_revision,
            tokenizer_revision="" if "tokenizer_path" in changed else instance.tokenizer_revision,
        )
        data.update(checkpoint=sources.checkpoint, tokenizer_path=sources.tokenizer_path, plugin=sources.plugin)
        instance.checkpoint_revision = sources.checkpoint_revision
        instance.tokenizer_revision = sources.tokenizer_revision
        return data


@admin.register(System)
class SystemAdmin(CheckedInputAdmin):
    form = SystemAdminForm
    list_display = ["name", "kind", "toy_model", "checkpoint", "checkpoint_revision", "plugin", "dtype", "updated_at"]
    list_filter = ["kind", "toy_model"]
    search_fields = ["name", "checkpoint", "plugin"]
    readonly_fields = ["toy_model", "checkpoint_revision", "tokenizer_revision", "created_at", "updated_at"]

    def save_model(self, request, obj, form, change):
        system_toy_model_record(system=obj)  # another checkpoint may be a toy model, or no longer one
        super().save_model(request, obj, form, change)


class EvaluationStartForm(forms.Form):
    testset = forms.ModelChoiceField(queryset=TestSet.objects.all(), label="test set")
    system = forms.ModelChoiceField(queryset=System.objects.all())


@admin.register(Evaluation)
class EvaluationAdmin(ScoringRunAdmin):
    run_permission = "evaluation.add_evaluation"
    list_display = [
        "id",
        "system",
        "testset",
        "status",
        "accuracy",
        "ci95",
        "chance",
        "toy_model_note",
        "job_link",
        "finished_at",
    ]
    list_filter = ["status", "system", "testset"]
    list_select_related = ["system", "testset", "job"]
    readonly_fields = ["system", "testset", *ScoringRunAdmin.readonly_fields]

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):  # replaces Django's add_view, which checks it
            raise PermissionDenied
        # ?testset=<pk>: the dataset workspace's "evaluate a system" on its newest test set
        testset = request.GET.get("testset", "")
        form = EvaluationStartForm(
            request.POST or None,
            initial={"testset": testset} if testset.isascii() and testset.isdigit() and len(testset) < 19 else {},
        )
        if request.method == "POST" and form.is_valid():
            try:
                evaluation, job = evaluation_start(
                    testset_name=form.cleaned_data["testset"].name,
                    system_name=form.cleaned_data["system"].name,
                    created_by=request.user,
                )
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                if job is None:
                    messages.info(request, "This system was already evaluated on this test set.")
                    return redirect(reverse("admin:evaluation_evaluation_change", args=[evaluation.pk]))
                return redirect(reverse("job-detail", args=[job.pk]))
        return render_form(
            request,
            self,
            form=form,
            title="Evaluate a system on a test set",
            intro="The system selects the lowest-loss candidate of every question. The job goes to the GPU "
            "queue (a worker without a GPU scores on its CPU) and can be cancelled and resumed.",
        )

    def startable_runs(self, queryset):
        return queryset.select_related("system", "testset")

    def run_start(self, run, *, user):
        _, job = evaluation_start(testset_name=run.testset.name, system_name=run.system.name, created_by=user)
        return job
