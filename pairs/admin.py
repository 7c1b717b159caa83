from django.contrib import admin, messages
from django.db.models import Count, Q
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.dataset_tools import DatasetTool
from annotation.models import Dataset
from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.errors import UserError
from core.services.uploads import upload_store
from pairs.forms import BuildPairsForm, PairImportForm
from pairs.models import Pair, PairSet, QuestionBuild, Review
from pairs.services.annotators import pair_verdicts_refresh, pairs_send_to_annotators
from pairs.services.transfer import pair_lines


@admin.register(PairSet)
class PairSetAdmin(CheckedInputAdmin):
    list_display = ["name", "dataset", "repository", "pair_count", "accepted", "pending", "links", "created_at"]
    list_select_related = ["dataset", "repository"]
    search_fields = ["name", "description"]
    fields = ["name", "dataset", "repository", "build_settings", "report", "description", "job", "created_by"]
    readonly_fields = ["name", "dataset", "repository", "build_settings", "report", "job", "created_by"]
    actions = ["send_to_annotators", "refresh_verdicts"]
    change_list_template = "admin/wellchosen/pairset_changelist.html"

    def has_add_permission(self, request):
        return False  # sets are built (dataset admin) or imported (JSON lines)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                pair_total=Count("pairs"),
                accepted_total=Count("pairs", filter=Q(pairs__review=Review.ACCEPTED)),
                pending_total=Count("pairs", filter=Q(pairs__review=Review.PENDING)),
            )
        )

    @admin.display(description="pairs", ordering="pair_total")
    def pair_count(self, obj):
        return obj.pair_total

    @admin.display(description="accepted", ordering="accepted_total")
    def accepted(self, obj):
        return obj.accepted_total

    @admin.display(description="to review", ordering="pending_total")
    def pending(self, obj):
        return obj.pending_total

    @admin.display(description="")
    def links(self, obj):
        return format_html(
            '<a href="{}">review</a> · <a href="{}">export JSONL</a>',
            reverse("pairs-review", args=[obj.name]),
            reverse("admin:pairs_pairset_export", args=[obj.pk]),
        )

    def get_urls(self):
        return [
            path(
                "import/",
                self.admin_site.admin_view(permission_required_page(self.import_view, read="pairs.add_pairset")),
                name="pairs_pairset_import",
            ),
            path(
                "<int:pk>/export/",
                self.admin_site.admin_view(permission_required_page(self.export_view, read="pairs.view_pair")),
                name="pairs_pairset_export",
            ),
        ] + super().get_urls()

    def import_view(self, request):
        form = PairImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            d = form.cleaned_data
            stored = str(upload_store(uploaded=d["file"]))
            return start_job(request, params=form.job_params(path=stored))
        return render_form(
            request,
            self,
            form=form,
            title="Import contrastive pairs",
            intro="JSON lines, one pair per line: context (a list of turns), correct, incorrect, type, and "
            "optionally subtype, criterion, span, incorrect_span, review and provenance (docs/pairs.md). "
            "One bad line and nothing is imported; the error names the line and the field.",
        )

    def export_view(self, request, pk: int):
        pair_set = get_object_or_404(PairSet, pk=pk)
        response = StreamingHttpResponse(pair_lines(pair_set=pair_set), content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{pair_set.name}.jsonl"'
        return response

    @admin.action(
        description="Send the incorrect responses to annotators (as candidates of their questions)",
        permissions=["change"],
    )
    def send_to_annotators(self, request, queryset):
        for pair_set in queryset:
            try:
                report = pairs_send_to_annotators(pair_set=pair_set)
            except UserError as error:
                self.message_user(request, str(error), messages.ERROR)
                continue
            self.message_user(
                request,
                f"{pair_set.name}: {report['pairs_sent']} pairs sent, {report['candidates_added']} new candidates "
                f"in {report['questions']} questions",
            )

    @admin.action(description="Apply the filter rules to the annotators' scores of sent pairs", permissions=["change"])
    def refresh_verdicts(self, request, queryset):
        for pair_set in queryset:
            counts = pair_verdicts_refresh(pair_set=pair_set)
            summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) or "no pair sent"
            self.message_user(request, f"{pair_set.name}: {summary}")


@admin.register(Pair)
class PairAdmin(ReadOnlyAdmin):
    list_display = ["id", "pair_set", "type", "subtype", "criterion", "incorrect", "review", "annotator_verdict"]
    list_filter = ["type", "subtype", "criterion", "review", "annotator_verdict", "pair_set"]
    search_fields = ["correct", "incorrect"]
    list_select_related = ["pair_set"]
    raw_id_fields = ["question", "candidate", "reviewed_by"]


@admin.register(QuestionBuild)
class QuestionBuildAdmin(ReadOnlyAdmin):
    list_display = ["pair_set", "question_id", "outcomes", "pairs_added", "error"]
    list_filter = ["pair_set"]
    raw_id_fields = ["question"]


def dataset_pairs_view(model_admin: admin.ModelAdmin, request, dataset: Dataset):
    """Build contrastive pairs from a dataset: a page of the dataset admin (registered in apps.py)."""
    form = BuildPairsForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return start_job(request, params=form.job_params(dataset=dataset.name))
    return render_form(
        request,
        model_admin,
        form=form,
        title=f"Build contrastive pairs from {dataset.name}",
        intro="Each ground truth is the correct response of a pair; rules make the incorrect one by a minimal "
        "edit (Okano et al.): a context-sensitive noun replaced by a noun the repository's bigram model finds "
        "equally likely (EL) or most likely (ML) in its place, the sentence type switched, or a preposition "
        "replaced. Pairs wait for review on the set's review page. Run again with the same name and settings to "
        "resume an interrupted build; the same seed gives the same pairs.",
    )


DATASET_PAIRS_TOOL = DatasetTool(slug="pairs", label="contrastive pairs", view=dataset_pairs_view)
