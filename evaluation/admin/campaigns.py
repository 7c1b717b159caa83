from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, job_link_html
from core.readable import number
from evaluation.models import Campaign, Generation, RandomTrialResult
from evaluation.services.campaigns import campaign_start


@admin.register(Campaign)
class CampaignAdmin(CheckedInputAdmin):
    list_display = [
        "name",
        "testset",
        "pair_set",
        "repository",
        "random_trials",
        "report_at",
        "job_link",
        "report_link",
    ]
    list_select_related = ["testset", "pair_set", "repository", "job"]
    search_fields = ["name", "description"]
    filter_horizontal = ["systems", "generations"]
    exclude = ["report", "job"]
    readonly_fields = ["report_link", "report_at", "job_link", "created_at"]
    actions = ["run_campaigns"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("report")  # the cached report can be large

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "generations":
            kwargs["queryset"] = Generation.objects.select_related("system", "dataset")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    @admin.display(description="report")
    def report_link(self, obj):
        if obj.pk is None:
            return ""
        return format_html('<a href="{}">report page</a>', reverse("campaign-report", args=[obj.name]))

    @admin.display(description="last run")
    def job_link(self, obj):
        if obj.job_id is None:
            return ""
        return format_html("{} ({})", job_link_html(obj.job_id), obj.job.status)

    @admin.action(
        description="Run the selected campaigns (CHOSEN and pair evaluations, RANDOM trials, report)",
        permissions=["change"],
    )
    def run_campaigns(self, request, queryset):
        jobs = [campaign_start(campaign=campaign, created_by=request.user) for campaign in queryset]
        links = format_html(
            ", ".join('<a href="{}">#{}</a>' for _ in jobs),
            *[x for job in jobs for x in (reverse("job-detail", args=[job.pk]), job.pk)],
        )
        messages.info(request, format_html("Campaign job(s) started: {}.", links))


@admin.register(RandomTrialResult)
class RandomTrialResultAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "system", "trial", "questions", "correct", "accuracy_display"]
    list_filter = ["campaign", "system"]
    list_select_related = ["campaign", "system"]

    @admin.display(description="accuracy")
    def accuracy_display(self, obj):
        return number(obj.accuracy)
