from django.contrib import admin, messages
from django.db.models import Count
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.admin.common import ReadOnlyAdmin, render_form, start_job
from annotation.models import JobKind
from annotation.services.jobs import job_create
from annotation.services.uploads import upload_store
from retrieval.forms import RepositoryImportForm
from retrieval.models import QuestionRetrieval, Repository, RetrievalIndex, Utterance


@admin.register(Repository)
class RepositoryAdmin(admin.ModelAdmin):
    list_display = ["name", "n_utterances", "content_version", "created_at"]
    search_fields = ["name"]
    readonly_fields = ["content_version", "created_at"]
    actions = ["build_indexes"]
    change_list_template = "admin/wellchosen/repository_changelist.html"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(utterance_count=Count("utterances"))

    @admin.display(description="utterances", ordering="utterance_count")
    def n_utterances(self, obj):
        return obj.utterance_count

    @admin.action(description="Build new search indexes (BM25 and embeddings)")
    def build_indexes(self, request, queryset):
        for repository in queryset:
            job = job_create(
                kind=JobKind.BUILD_INDEXES, params={"repository": repository.name}, created_by=request.user
            )
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
            path("import/", self.admin_site.admin_view(self.import_view), name="retrieval_repository_import"),
        ] + super().get_urls()

    def import_view(self, request):
        form = RepositoryImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            d = form.cleaned_data
            return start_job(
                request,
                kind=JobKind.IMPORT_REPOSITORY,
                params={
                    "path": str(upload_store(uploaded=d["file"])),
                    "name": d["name"],
                    "format": d["format"],
                    "min_tokens": d["min_tokens"],
                    "exclude_datasets": [ds.name for ds in d["exclude_datasets"]],
                },
            )
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
