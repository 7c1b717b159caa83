from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse
from django.urls import path

from annotation.forms import AddToDatasetForm, ScoreImportForm
from annotation.models import Annotator, DatasetMembership, FilterRules, Score
from annotation.services.annotators_membership import member_remove, members_add
from annotation.services.filter_rules import filter_rules_create
from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.errors import UserError
from core.services.uploads import upload_store


class MembershipInlineSaving:
    """Membership inlines save through the services: adding is members_add (placeholders of
    imported scores refused, caps checked), deleting is member_remove (scores and leases kept, a
    choice of the dataset reset)."""

    def save_formset(self, request, form, formset, change):
        if formset.model is not DatasetMembership:
            return super().save_formset(request, form, formset, change)
        memberships = formset.save(commit=False)
        try:
            for membership in formset.deleted_objects:
                member_remove(dataset=membership.dataset, annotator=membership.annotator)
            for membership in memberships:
                members_add(
                    dataset=membership.dataset, annotators=[membership.annotator], max_units=membership.max_units
                )
                if membership.max_units is None and membership.pk is not None:  # a cap taken away
                    DatasetMembership.objects.filter(pk=membership.pk).update(max_units=None)
        except UserError as exc:
            self.message_user(request, str(exc), messages.ERROR)
        return None


class AnnotatorMembershipInline(admin.TabularInline):
    model = DatasetMembership
    extra = 0
    fields = ["dataset", "max_units", "created_at"]
    readonly_fields = ["created_at"]
    verbose_name = "dataset membership"
    verbose_name_plural = "datasets this annotator works on"


@admin.register(Annotator)
class AnnotatorAdmin(MembershipInlineSaving, CheckedInputAdmin):
    list_display = ["__str__", "provider", "external_id", "user", "is_blocked", "scores_excluded", "created_at"]
    list_filter = ["provider", "is_blocked", "scores_excluded", "memberships__dataset"]
    list_select_related = ["user"]
    search_fields = ["external_id", "display_name", "user__username"]
    raw_id_fields = ["user"]
    inlines = [AnnotatorMembershipInline]
    actions = ["add_to_dataset_action"]

    def has_membership_permission(self, request) -> bool:
        return request.user.has_perm("annotation.add_datasetmembership")

    @admin.action(description="Add to dataset…", permissions=["membership"])
    def add_to_dataset_action(self, request, queryset):
        """Asks for the dataset (and a cap) on a page of its own, then adds the chosen annotators."""
        form = AddToDatasetForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            annotators = list(queryset)
            try:
                added = members_add(
                    dataset=form.cleaned_data["dataset"],
                    annotators=annotators,
                    max_units=form.cleaned_data["max_units"],
                )
            except UserError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                return None
            self.message_user(
                request,
                f"{added} annotator(s) added to {form.cleaned_data['dataset'].name} "
                f"({len(annotators) - added} were members already).",
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Add annotators to a dataset",
            "form": form,
            "annotators": queryset,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/wellchosen/annotators_add_to_dataset.html", context)


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
            return start_job(request, params=form.job_params(path=path))
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
