from django.contrib import admin, messages
from django.db.models import Count
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.dataset_tools import DatasetTool, QuestionLink
from annotation.models import Dataset, Repository, Utterance
from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.normalisers import normaliser_label
from core.services.jobs import job_create
from core.services.uploads import upload_store
from retrieval.forms import PoolForm, RepositoryImportForm
from retrieval.job_params import BuildIndexesParams
from retrieval.models import QuestionRetrieval, RetrievalIndex


@admin.register(Repository)
class RepositoryAdmin(CheckedInputAdmin):
    list_display = ["name", "n_utterances", "normaliser", "content_version", "created_at"]
    search_fields = ["name"]
    readonly_fields = ["content_version", "text_normaliser", "text_normaliser_version", "created_at"]
    actions = ["build_indexes"]
    change_list_template = "admin/wellchosen/repository_changelist.html"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(utterance_count=Count("utterances"))

    @admin.display(description="utterances", ordering="utterance_count")
    def n_utterances(self, obj):
        return obj.utterance_count

    @admin.display(description="normaliser", ordering="text_normaliser")
    def normaliser(self, obj):
        return normaliser_label(obj.text_normaliser, obj.text_normaliser_version)

    @admin.action(description="Build new search indexes (BM25 and embeddings)", permissions=["change"])
    def build_indexes(self, request, queryset):
        for repository in queryset:
            job = job_create(params=BuildIndexesParams(repository=repository.name), created_by=request.user)
            messages.info(
                request,
                format_html(
                    'Indexing {}: <a href="{}">job #{}</a>',
                    repository.name,
                    reverse("job-detail", args=[job.pk]),
                    job.pk,
                ),
            )

    def get_urls(self):
        return [
            path(
                "import/",
                self.admin_site.admin_view(
                    permission_required_page(self.import_view, read="annotation.add_repository")
                ),
                name="retrieval_repository_import",
            ),
        ] + super().get_urls()

    def import_view(self, request):
        form = RepositoryImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            path = str(upload_store(uploaded=form.cleaned_data["file"]))
            return start_job(request, params=form.job_params(path=path))
        return render_form(
            request,
            self,
            form=form,
            title="Import an utterance repository",
            intro="Streams the file into the repository, de-duplicated by normalised text. Runs as a background job.",
        )


@admin.register(Utterance)
class UtteranceAdmin(ReadOnlyAdmin):
    list_display = ["id", "repository", "short_text", "n_tokens", "source", "source_line", "source_ref"]
    list_filter = ["repository"]
    list_select_related = ["repository"]
    search_fields = ["text"]
    show_full_result_count = False  # COUNT(*) over millions of rows on every page is too slow

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:100]


@admin.register(RetrievalIndex)
class RetrievalIndexAdmin(ReadOnlyAdmin):
    list_display = [
        "repository",
        "kind",
        "version",
        "backend",
        "status",
        "utterance_count",
        "content_version",
        "built_at",
    ]
    list_filter = ["kind", "status", "repository"]
    list_select_related = ["repository"]


@admin.register(QuestionRetrieval)
class QuestionRetrievalAdmin(ReadOnlyAdmin):
    list_display = ["question_id", "repository", "status", "pool_size", "job_id", "updated_at"]
    list_filter = ["status", "repository", "question__dataset"]
    list_select_related = ["repository"]
    raw_id_fields = ["question", "job"]


def dataset_pools_view(model_admin: admin.ModelAdmin, request, dataset: Dataset):
    """Candidate pools for a dataset: a page of the dataset admin (registered in apps.py)."""
    form = PoolForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return start_job(request, params=form.job_params(dataset=dataset.name))
    return render_form(
        request,
        model_admin,
        form=form,
        title=f"Build candidate pools for {dataset.name}",
        intro="For every question, utterances related to its ground truth are retrieved from the repository "
        "by BM25 and by embedding similarity. Missing or stale search indexes are built first. Questions "
        "whose pool is finished are skipped, so the job can be run again after a failure.",
    )


DATASET_POOLS_TOOL = DatasetTool(slug="pools", label="candidate pools", view=dataset_pools_view)


def pool_review_url(question) -> str:
    """The pool review page of the question (of the original, for a derived question)."""
    return f"{reverse('pool-review', args=[question.dataset.name])}?q={question.derived_from_id or question.pk}"


POOL_REVIEW_LINK = QuestionLink(label="review the pool beside its dialogue", url=pool_review_url)
