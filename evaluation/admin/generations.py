"""Admin of generations (a system's responses to a dataset's contexts) and their responses."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.models import Dataset
from core.admin.helpers import ReadOnlyAdmin, permission_required_page, readable_result_html, render_form
from core.errors import UserError
from evaluation.admin.runs import SystemRunAdmin
from evaluation.models import DecodingStrategy, GeneratedResponse, Generation, System
from evaluation.scoring.backends import scoring_kinds
from evaluation.services.generations import generation_start
from evaluation.services.human_ratings import rating_dataset_create


class GenerationStartForm(forms.Form):
    system = forms.ModelChoiceField(queryset=System.objects.filter(kind__in=scoring_kinds()))
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), help_text="Its questions' contexts are answered.")
    strategy = forms.ChoiceField(
        choices=[(s.value, s.label) for s in (DecodingStrategy.GREEDY, DecodingStrategy.NUCLEUS)]
    )
    # generation_start checks the decoding (top-p in (0, 1], a positive temperature, 1-32767 tokens)
    # and its UserError is shown on the form.
    top_p = forms.FloatField(initial=0.9, label="top-p", help_text="Nucleus only; in (0, 1].")
    temperature = forms.FloatField(initial=1.0, help_text="Nucleus only; positive.")
    max_new_tokens = forms.IntegerField(initial=40)
    seed = forms.IntegerField(initial=0, help_text="Nucleus only: the same seed gives the same responses.")


class RatingDatasetForm(forms.Form):
    """rating_dataset_create checks the name and everything else; its UserError is the form's error."""

    generations = forms.ModelMultipleChoiceField(
        queryset=Generation.objects.select_related("system", "dataset"),
        help_text="Their responses to the same context are rated side by side, in one unit.",
    )
    name = forms.CharField(max_length=100, help_text="Name of the new rating dataset.")
    annotators_per_item = forms.IntegerField(initial=5, min_value=1, max_value=50, label="annotators per response")
    include_reference = forms.BooleanField(
        initial=True, required=False, help_text="Rate the reference too (it also checks the raters)."
    )


@admin.register(Generation)
class GenerationAdmin(SystemRunAdmin):
    run_permission = "evaluation.add_generation"
    list_display = [
        "id",
        "system",
        "source",
        "strategy",
        "status",
        "responses_count",
        "toy_model_note",
        "job_link",
        "finished_at",
    ]
    list_filter = ["status", "strategy", "system"]
    list_select_related = ["system", "dataset"]
    readonly_fields = [
        "system",
        "dataset",
        "source_file",
        "strategy",
        "top_p",
        "temperature",
        "max_new_tokens",
        "seed",
        "status",
        "responses_count",
        "job_link",
        "system_version",
        "system_revision",
        "error",
        "created_at",
        "finished_at",
        "summary",
    ]
    exclude = ["job"]
    actions = [*SystemRunAdmin.actions, "collect_ratings"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_responses=Count("responses"))

    def has_collect_permission(self, request) -> bool:
        return request.user.has_perm("annotation.add_dataset")  # the ratings are a new dataset

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):  # replaces Django's add_view, which checks it
            raise PermissionDenied
        form = GenerationStartForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                generation, job = generation_start(
                    system_name=data["system"].name,
                    dataset_name=data["dataset"].name,
                    strategy=data["strategy"],
                    top_p=data["top_p"],
                    temperature=data["temperature"],
                    max_new_tokens=data["max_new_tokens"],
                    seed=data["seed"],
                    created_by=request.user,
                )
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                if job is None:
                    messages.info(request, "This system already answered this dataset with this decoding.")
                    return redirect(reverse("admin:evaluation_generation_change", args=[generation.pk]))
                return redirect(reverse("job-detail", args=[job.pk]))
        return render_form(
            request,
            self,
            form=form,
            title="Generate responses with a system",
            intro="One response per context of the dataset's questions (derived questions share theirs). The job "
            "goes to the GPU queue (a worker without a GPU generates on its CPU) and can be cancelled and resumed. "
            "Changing the decoding of a generation replaces its responses.",
        )

    def get_urls(self):
        view = self.admin_site.admin_view(
            permission_required_page(self.rating_dataset_view, read="annotation.add_dataset")
        )
        return [path("rate/", view, name="evaluation_generation_rate"), *super().get_urls()]

    def rating_dataset_view(self, request):
        """Send generations' responses to annotators: a "rate this response 1-5" dataset."""
        # The action's own link: ASCII ids (str.isdigit alone takes "²", which int() refuses)
        ids = [int(i) for i in request.GET.get("ids", "").split(",") if i.isascii() and i.isdigit()]
        form = RatingDatasetForm(request.POST or None, initial={"generations": ids})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                dataset = rating_dataset_create(
                    name=data["name"],
                    generation_ids=[g.pk for g in data["generations"]],
                    annotators_per_item=data["annotators_per_item"],
                    include_reference=data["include_reference"],
                )
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                messages.info(request, f"Rating dataset {dataset.name} is open: assign annotators to it.")
                return redirect(reverse("dashboard-dataset", args=[dataset.name]))
        return render_form(
            request,
            self,
            form=form,
            title="Collect human ratings of generated responses",
            intro='A new dataset of the task "rate this response 1-5": one unit per context, holding every '
            "selected system's response to it (and the reference), each rated by the given number of annotators. "
            "Assign annotators to it or publish it as a crowd batch; the campaign report reads the ratings.",
        )

    @admin.action(description="Collect human ratings of the selected generations", permissions=["collect"])
    def collect_ratings(self, request, queryset):
        ids = ",".join(str(pk) for pk in queryset.values_list("pk", flat=True))
        return redirect(reverse("admin:evaluation_generation_rate") + f"?ids={ids}")

    @admin.display(description="dataset or file")
    def source(self, obj):
        return obj.dataset or obj.source_file

    @admin.display(description="responses", ordering="n_responses")
    def responses_count(self, obj):
        url = reverse("admin:evaluation_generatedresponse_changelist") + f"?generation__id__exact={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, obj.n_responses)

    @admin.display(description="summary of the last job")
    def summary(self, obj):
        result = obj.job.result if obj.job_id else {}
        return readable_result_html(result or {})

    def startable_runs(self, queryset):
        return queryset.select_related("system", "dataset").filter(dataset__isnull=False)  # imports do not run

    def run_start(self, run, *, user):
        _, job = generation_start(
            system_name=run.system.name,
            dataset_name=run.dataset.name,
            strategy=run.strategy,
            top_p=run.top_p,
            temperature=run.temperature,
            max_new_tokens=run.max_new_tokens,
            seed=run.seed,
            created_by=user,
        )
        return job


@admin.register(GeneratedResponse)
class GeneratedResponseAdmin(ReadOnlyAdmin):
    list_display = ["id", "generation", "context_key", "text", "n_tokens"]
    list_filter = ["generation__system", "generation__strategy"]
    list_select_related = ["generation__system", "generation__dataset"]
    search_fields = ["text", "context_key", "generation__system__name"]
    readonly_fields = ["generation", "question", "context_key", "turns", "reference_list", "text", "n_tokens"]
    exclude = ["context", "references", "candidate"]

    @admin.display(description="context")
    def turns(self, obj):
        return format_html("<pre>{}</pre>", "\n".join(obj.context))

    @admin.display(description="references")
    def reference_list(self, obj):
        return format_html("<pre>{}</pre>", "\n".join(obj.references))
