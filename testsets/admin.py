import json

from django.contrib import admin
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.models import TestSet
from annotation.services.testset_export_hf import hf_folder_zip
from annotation.testset_io import EXPORTS, export_filename, manifest_bytes, render_export
from core.admin.helpers import CheckedInputAdmin, permission_required_page


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
        links = [
            (reverse("admin:annotation_testset_download", args=[obj.pk, kind]), export_filename(obj, kind))
            for kind in EXPORTS
        ]
        links.append(
            (reverse("admin:annotation_testset_download", args=[obj.pk, "manifest"]), f"{obj.name}.manifest.json")
        )
        links.append((reverse("admin:annotation_testset_download", args=[obj.pk, "hf"]), f"{obj.name}.hf.zip"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="manifest")
    def manifest_pretty(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.manifest, indent=2, sort_keys=True))

    def get_urls(self):
        return [
            path(
                "<int:pk>/download/<str:kind>/",
                self.admin_site.admin_view(
                    permission_required_page(self.download_view, read="annotation.view_testset")
                ),
                name="annotation_testset_download",
            ),
        ] + super().get_urls()

    def download_view(self, request, pk, kind):
        testset = get_object_or_404(TestSet.objects.select_related("dataset"), pk=pk)
        if kind == "hf":
            # the Hugging Face folder (card, croissant.json, lm-eval task), built in memory: the
            # Parquet and the manifest of sha256 need every record first
            response = HttpResponse(hf_folder_zip(testset), content_type="application/zip")
            response["Content-Disposition"] = f'attachment; filename="{testset.name}.hf.zip"'
            return response
        if kind == "manifest":
            chunks, filename, content_type = (
                [manifest_bytes(testset)],
                f"{testset.name}.manifest.json",
                "application/json",
            )
        elif kind in EXPORTS:
            chunks = (chunk.encode("utf-8") for chunk in render_export(testset, kind))
            filename, content_type = export_filename(testset, kind), EXPORTS[kind][2]
        else:
            raise Http404(f"unknown export {kind!r}")
        response = StreamingHttpResponse(chunks, content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
