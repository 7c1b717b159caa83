import json

from django.contrib import admin
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.admin.dataset_tools import DatasetListPage, DatasetTool
from annotation.models import Dataset
from annotation.selectors import filter_rules_current
from core.admin.helpers import CheckedInputAdmin, permission_required_page, render_form, start_job
from core.services.uploads import upload_store
from testsets.formats.base import manifest_bytes
from testsets.formats.registry import FORMATS
from testsets.forms import AuditShortcutsForm, BuildTestsetForm, TestsetImportForm
from testsets.models import TestSet
from testsets.selectors import shortcut_audit_latest
from testsets.shortcuts.report import balance_sentence, shortcut_rows


@admin.register(TestSet)
class TestSetAdmin(CheckedInputAdmin):
    list_display = [
        "name",
        "dataset",
        "rules",
        "seed",
        "false_per_question",
        "n_questions",
        "license",
        "created_at",
        "downloads",
    ]
    list_select_related = ["dataset", "rules"]
    list_filter = ["dataset"]
    readonly_fields = [
        "name",
        "dataset",
        "rules",
        "seed",
        "false_per_question",
        "created_at",
        "downloads",
        "shortcut_audit",
        "manifest_pretty",
    ]
    exclude = ["manifest"]

    # Built from a dataset ("build test set") and frozen; only the license may be edited: it is
    # stated on the Hugging Face card, not part of the frozen rows or their manifest.

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a published test set stays reproducible

    @admin.display(description="questions")
    def n_questions(self, obj):
        return obj.manifest.get("counts", {}).get("questions")

    @admin.display(description="download")
    def downloads(self, obj):
        downloads = [(d.key, d.filename) for f in FORMATS.values() for d in f.downloads(obj)]
        downloads.append(("manifest", f"{obj.name}.manifest.json"))
        links = [(reverse("admin:testsets_testset_download", args=[obj.pk, key]), name) for key, name in downloads]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="shortcut audit")
    def shortcut_audit(self, obj):
        """The newest stored audit of the test set (audit_shortcuts, maybe with a system), else the one
        its manifest recorded at build; each baseline's accuracy and interval beside chance."""
        stored = shortcut_audit_latest(testset=obj)
        result, origin = (
            (stored.result, f"audit of {stored.created_at:%Y-%m-%d %H:%M}")
            if stored
            else (obj.manifest.get("shortcut_audit"), "recorded in the manifest at build")
        )
        return render_to_string(
            "testsets/_shortcut_audit.html",
            {
                "result": result,
                "origin": origin,
                "rows": shortcut_rows(result or {}),
                "balance": balance_sentence(obj.manifest.get("shortcut_balance")),
                "audit_url": reverse("admin:testsets_testset_audit", args=[obj.pk]),
            },
        )

    @admin.display(description="manifest")
    def manifest_pretty(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.manifest, indent=2, sort_keys=True))

    def get_urls(self):
        return [
            path(
                "<int:pk>/download/<str:kind>/",
                self.admin_site.admin_view(permission_required_page(self.download_view, read="testsets.view_testset")),
                name="testsets_testset_download",
            ),
            path(
                "<int:pk>/audit/",
                self.admin_site.admin_view(
                    permission_required_page(self.audit_view, read="testsets.add_shortcutaudit")
                ),
                name="testsets_testset_audit",
            ),
        ] + super().get_urls()

    def audit_view(self, request, pk):
        testset = get_object_or_404(TestSet, pk=pk)
        return audit_form_page(
            self, request, title=f"Audit test set {testset.name} for shortcuts", testset=testset.name
        )

    def download_view(self, request, pk, kind):
        testset = get_object_or_404(TestSet.objects.select_related("dataset"), pk=pk)
        if kind == "manifest":
            response = StreamingHttpResponse([manifest_bytes(testset)], content_type="application/json; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{testset.name}.manifest.json"'
            return response
        download = next((d for f in FORMATS.values() for d in f.downloads(testset) if d.key == kind), None)
        if download is None:
            raise Http404(f"unknown export {kind!r}")
        body = download.body()
        if isinstance(body, bytes):  # made whole in memory (a zip): sent whole
            response = HttpResponse(body, content_type=download.content_type)
        else:
            response = StreamingHttpResponse(body, content_type=download.content_type)
        response["Content-Disposition"] = f'attachment; filename="{download.filename}"'
        return response


def build_view(model_admin, request, dataset: Dataset):
    """The dataset admin's "build test set" page (a dataset tool, annotation.admin.dataset_tools)."""
    form = BuildTestsetForm(request.POST or None, dataset=dataset, initial={"rules": filter_rules_current()})
    if request.method == "POST" and form.is_valid():
        return start_job(request, params=form.job_params(dataset=dataset.name))
    response = render_form(
        request,
        model_admin,
        form=form,
        title=f"Build a test set from {dataset.name}",
        intro="The test set is frozen once built: its questions, candidate order, scores and "
        "the sha256 of every export are recorded in its manifest. A build the filter preview "
        "knows would yield no question is refused here, with the preview's reason.",
    )
    if request.method == "POST":  # refused: nothing was queued
        response.status_code = 400
    return response


def audit_view(model_admin, request, dataset: Dataset):
    """The dataset admin's "audit shortcuts" page: the audit of the dataset's pools."""
    return audit_form_page(
        model_admin, request, title=f"Audit the pools of {dataset.name} for shortcuts", dataset=dataset.name
    )


def audit_form_page(model_admin, request, *, title: str, **target: str):
    form = AuditShortcutsForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return start_job(request, params=form.job_params(**target))
    response = render_form(
        request,
        model_admin,
        form=form,
        title=title,
        intro="Context-free baselines pick a reply per question from the candidates alone: the longest and the "
        "shortest, the most and the least similar to the others, a classifier of surface features "
        "cross-validated over questions, and (with a system) the reply a language model finds likeliest with "
        "an empty context. Each one's accuracy is shown with its 95 % interval beside chance.",
    )
    if request.method == "POST":  # refused: nothing was queued
        response.status_code = 400
    return response


def import_view(model_admin, request):
    """The dataset list's "import released test set" page."""
    form = TestsetImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        params = form.job_params(
            path=str(upload_store(uploaded=d["tsv"])),
            scores_path=str(upload_store(uploaded=d["scores"])) if d["scores"] else None,
        )
        return start_job(request, params=params)
    return render_form(
        request,
        model_admin,
        form=form,
        title="Import a released test set",
        intro="Sato et al.'s format: context turns, ground truth and false candidates, "
        "tab-separated, with an optional human_scores.jsonl.",
    )


# Registered with the dataset admin from TestsetsConfig.ready(); the URLs and their names are the
# dataset admin's (admin:annotation_dataset_build, admin:annotation_dataset_import_testset).
BUILD_TOOL = DatasetTool(slug="build", label="build test set", view=build_view, permission="testsets.add_testset")
AUDIT_TOOL = DatasetTool(
    slug="shortcut-audit", label="audit shortcuts", view=audit_view, permission="testsets.add_shortcutaudit"
)
IMPORT_PAGE = DatasetListPage(
    slug="import-testset",
    name="import_testset",
    label="Import released test set",
    view=import_view,
    permission="annotation.add_dataset",
)
