from django.contrib import admin
from django.urls import path

from annotation.forms import ScoreImportForm
from annotation.job_params import ImportScoresParams
from annotation.models import Annotator, FilterRules, Score
from annotation.services.filter_rules import filter_rules_create
from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.services.uploads import upload_store


@admin.register(Annotator)
class AnnotatorAdmin(CheckedInputAdmin):
    list_display = ["__str__", "provider", "external_id", "user", "is_blocked", "scores_excluded", "created_at"]
    list_filter = ["provider", "is_blocked", "scores_excluded"]
    list_select_related = ["user"]
    search_fields = ["external_id", "display_name", "user__username"]
    raw_id_fields = ["user"]


@admin.register(Score)
class ScoreAdmin(ReadOnlyAdmin):
    list_display = ["id", "candidate_id", "annotator", "value", "counted", "assignment_ref", "created_at"]
    list_filter = ["value", "counted", "annotator__provider", "candidate__question__dataset"]
    list_select_related = ["annotator"]
    raw_id_fields = ["candidate", "annotator"]
    change_list_template = "admin/wellchosen/score_changelist.html"

    # Read-only: scores come from annotators and imports and are never edited in place.

    def get_urls(self):
        return [
            path(
                "import/",
                self.admin_site.admin_view(permission_required_page(self.import_view, read="annotation.add_score")),
                name="annotation_score_import",
            ),
        ] + super().get_urls()

    def import_view(self, request):
        form = ScoreImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            path = str(upload_store(uploaded=form.cleaned_data["file"]))
            return start_job(request, params=ImportScoresParams(path=path))
        return render_form(
            request,
            self,
            form=form,
            title="Import scores",
            intro="CSV: question_id,candidate_id,annotator,score. Annotator is provider:id "
            "(e.g. mturk:A1B2) or a bare id. Existing scores are never overwritten.",
        )


@admin.register(FilterRules)
class FilterRulesAdmin(CheckedInputAdmin):
    list_display = ["version", *FilterRules.THRESHOLD_FIELDS, "note", "created_at"]
    fields = [*FilterRules.THRESHOLD_FIELDS, "note"]

    def has_change_permission(self, request, obj=None):
        return False  # a new version is added instead; test sets point at the version they used

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        created = filter_rules_create(
            **{name: form.cleaned_data[name] for name in FilterRules.THRESHOLD_FIELDS},
            note=form.cleaned_data.get("note", ""),
        )
        obj.pk, obj.version = created.pk, created.version
