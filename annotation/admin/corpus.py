from functools import partial

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.forms import DatasetAdminForm, DialogueImportForm, PreviewForm
from annotation.models import Candidate, Context, Dataset, Question, Turn
from annotation.rules import FALSE_PER_QUESTION
from annotation.selectors import filter_preview, filter_rules_current
from annotation.selectors_agreement import dataset_agreement
from annotation.selectors_dataset import attention_checks_status
from annotation.selectors_display import dialogue_turns_display
from annotation.services.datasets import dataset_save
from core import readable
from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.services.uploads import upload_store

from .dataset_tools import DatasetListPage, DatasetTool, dataset_list_pages, dataset_tools, question_links


@admin.register(Dataset)
class DatasetAdmin(CheckedInputAdmin):
    form = DatasetAdminForm
    list_display = [
        "name",
        "task",
        "n_questions",
        "annotators_per_item",
        "context_turns",
        "created_at",
        "actions_links",
    ]
    list_filter = ["task"]
    search_fields = ["name"]
    # set by the imports (core.normalisers), the same for all of them
    readonly_fields = ["attention_checks", "text_normaliser", "text_normaliser_version", "created_at"]
    change_list_template = "admin/wellchosen/dataset_changelist.html"

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is not None and obj.is_rating:  # the flag means nothing there: show what applies
            fields = ["adaptive_stopping_applied" if f == "adaptive_stopping" else f for f in fields]
            fields = [f for f in fields if f not in ("stopping_tolerance", "spot_check_rate")]
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            readonly.append("task")  # its questions and scores are of that task: it cannot change later
        if obj is not None and obj.is_rating:
            readonly.append("adaptive_stopping_applied")
        return readonly

    @admin.display(description="attention checks")
    def attention_checks(self, obj):
        return attention_checks_status(dataset=obj)

    @admin.display(description="adaptive stopping")
    def adaptive_stopping_applied(self, obj):
        return "off (rating generated responses: every response gets all its ratings)"

    def save_model(self, request, obj, form, change):
        dataset_save(dataset=obj)

    def _refuse_rating(self, request, dataset: Dataset, what: str):
        """The test-set tools (pools, filter preview, build) do not apply to a rating dataset."""
        messages.error(
            request, f"{dataset.name} rates generated responses 1-5: {what} only apply to test-set datasets."
        )
        return redirect("admin:annotation_dataset_changelist")

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(question_count=Count("questions", filter=Q(questions__derived_from__isnull=True)))
        )

    @admin.display(description="questions", ordering="question_count")
    def n_questions(self, obj):
        return obj.question_count

    @admin.display(description="")
    def actions_links(self, obj):
        if obj.is_rating:
            return format_html('<a href="{}">ratings dashboard</a>', reverse("dashboard-dataset", args=[obj.name]))
        links = [
            (reverse(f"admin:annotation_dataset_{tool.slug}", args=[obj.pk]), tool.label) for tool in dataset_tools()
        ]
        links.append((reverse("admin:annotation_dataset_preview", args=[obj.pk]), "filter preview & agreement"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def get_urls(self):
        def view(page, permission: str):
            return self.admin_site.admin_view(permission_required_page(page, read=permission))

        return (
            [
                path(
                    "import-dialogues/",
                    view(self.import_dialogues_view, "annotation.add_dataset"),
                    name="annotation_dataset_import_dialogues",
                ),
                path(
                    "<int:pk>/preview/",
                    view(self.preview_view, "annotation.view_dataset"),
                    name="annotation_dataset_preview",
                ),
            ]
            + [
                path(
                    f"{page.slug}/",
                    view(partial(self.list_page_view, page), page.permission),
                    name=f"annotation_dataset_{page.name}",
                )
                for page in dataset_list_pages()
            ]
            + [
                path(
                    f"<int:pk>/{tool.slug}/",
                    view(partial(self.tool_view, tool), tool.permission),
                    name=f"annotation_dataset_{tool.slug}",
                )
                for tool in dataset_tools()
            ]
            + super().get_urls()
        )

    def changelist_view(self, request, extra_context=None):
        pages = [(reverse(f"admin:annotation_dataset_{page.name}"), page.label) for page in dataset_list_pages()]
        return super().changelist_view(request, {**(extra_context or {}), "dataset_list_pages": pages})

    def list_page_view(self, page: DatasetListPage, request):
        """A registered page of the dataset list (dataset_list_pages)."""
        return page.view(self, request)

    def tool_view(self, tool: DatasetTool, request, pk):
        """A registered dataset tool (dataset_tools): every one of them builds toward a test set."""
        dataset = get_object_or_404(Dataset, pk=pk)
        if dataset.is_rating:
            return self._refuse_rating(request, dataset, tool.label)
        return tool.view(self, request, dataset)

    def import_dialogues_view(self, request):
        # ?dataset=<name>: the workspace's "import dialogues" into an existing dataset
        initial = {"dataset": request.GET.get("dataset", "")[:100]}
        form = DialogueImportForm(request.POST or None, request.FILES or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            d = form.cleaned_data
            return start_job(request, params=form.job_params(path=str(upload_store(uploaded=d["file"]))))
        return render_form(
            request,
            self,
            form=form,
            title="Import dialogues",
            intro="Each dialogue becomes a question: its first turns are the context, the next turn "
            "the ground truth. The import runs as a background job.",
        )

    def preview_view(self, request, pk):
        dataset = get_object_or_404(Dataset, pk=pk)
        if dataset.is_rating:
            return self._refuse_rating(request, dataset, "the filter preview and test-set yield")
        rules, k = filter_rules_current(), FALSE_PER_QUESTION
        form = PreviewForm(request.GET or None, initial={"rules": rules, "false_per_question": k})
        if form.is_valid():
            rules = form.cleaned_data["rules"] or rules
            k = form.cleaned_data["false_per_question"] or k
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Filter preview: {dataset.name}",
            "dataset": dataset,
            "form": form,
            "rules": rules,
            "preview": filter_preview(dataset=dataset, rules=rules, false_per_question=k),
            "agreement": dataset_agreement(dataset=dataset),
        }
        return TemplateResponse(request, "admin/wellchosen/dataset_preview.html", context)


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0
    fields = ["position", "speaker", "text"]
    readonly_fields = fields
    can_delete = False


@admin.register(Context)
class ContextAdmin(ReadOnlyAdmin):
    list_display = ["id", "dataset", "source", "source_line"]
    list_filter = ["dataset"]
    list_select_related = ["dataset"]
    search_fields = ["turns__text"]
    inlines = [TurnInline]
    readonly_fields = ["dataset", "source", "source_line", "created_at"]


def provenance_summary(candidate: Candidate) -> str:
    """How a generated candidate was made, on one line: the model, the settings and each edit
    ("after" -> "before" (1.32)); empty for a retrieved or imported one."""
    p = candidate.provenance or {}
    if not p:
        return ""
    scores = {s.get("position"): s.get("score") for s in p.get("selected", [])}
    edits = ", ".join(
        f"{r.get('original')!r} → {r.get('replacement')!r}"
        + (f" ({scores[r.get('position')]:.2f})" if isinstance(scores.get(r.get("position")), int | float) else "")
        for r in p.get("replacements", [])
    )
    settings = ", ".join(
        f"{key} {p[key]}" for key in ("threshold", "seed", "sample", "replace_with_context") if key in p
    )
    return "; ".join(part for part in (p.get("method", ""), p.get("model_version", ""), settings, edits) if part)


class ProvenanceColumn:
    @admin.display(description="how it was made")
    def how_made(self, obj):
        return provenance_summary(obj)


class CandidateInline(ProvenanceColumn, admin.TabularInline):
    model = Candidate
    extra = 0
    fields = [
        "text",
        "is_ground_truth",
        "source",
        "score",
        "rank",
        "retriever_version",
        "how_made",
        "n_scores",
    ]
    readonly_fields = fields
    can_delete = False
    show_change_link = True
    # Django's tabular inline with the candidate's link under its id: the text is shown once, in its column.
    template = "admin/wellchosen/candidate_inline.html"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(score_count=Count("scores"))

    @admin.display(description="retriever score")
    def score(self, obj):
        return readable.number(obj.retrieval_score)

    @admin.display(description="scores")
    def n_scores(self, obj):
        return obj.score_count


@admin.register(Question)
class QuestionAdmin(ReadOnlyAdmin):
    list_display = ["id", "dataset", "short_ground_truth", "derived_from"]
    list_filter = ["dataset", ("derived_from", admin.EmptyFieldListFilter)]
    list_select_related = ["dataset"]
    search_fields = ["ground_truth"]
    raw_id_fields = ["context", "derived_from", "derived_ground_truth"]
    fields = [
        "dataset",
        "dialogue",
        "context",
        "ground_truth",
        "derived_from",
        "derived_ground_truth",
        "review",
        "created_at",
    ]
    readonly_fields = fields
    inlines = [CandidateInline]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("dataset", "context")

    @admin.display(description="ground truth")
    def short_ground_truth(self, obj):
        return obj.ground_truth[:100]

    @admin.display(description="dialogue")
    def dialogue(self, obj):
        turns = dialogue_turns_display(context_id=obj.context_id)
        return format_html(
            '<ol class="dialogue">{}</ol>',
            format_html_join("", "<li>{}: {}</li>", ((t["speaker"], t["text"]) for t in turns)),
        )

    @admin.display(description="pool")
    def review(self, obj):
        if obj.dataset.is_rating:
            return "–"  # rated generated responses: no pool
        return format_html_join(
            " · ", '<a href="{}">{}</a>', ((link.url(obj), link.label) for link in question_links())
        )


@admin.register(Candidate)
class CandidateAdmin(ProvenanceColumn, ReadOnlyAdmin):
    list_display = ["id", "question_id", "short_text", "is_ground_truth", "source", "score", "rank"]
    list_filter = ["source", "is_ground_truth", "question__dataset"]
    search_fields = ["text"]
    raw_id_fields = ["question", "utterance"]
    readonly_fields = [
        "question",
        "utterance",
        "text",
        "text_hash",
        "is_ground_truth",
        "source",
        "score",
        "rank",
        "retriever_version",
        "how_made",
        "retrieval",
        "provenance",
        "created_at",
    ]

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:100]

    @admin.display(description="retriever score", ordering="retrieval_score")
    def score(self, obj):
        return readable.number(obj.retrieval_score)
