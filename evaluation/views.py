"""Campaign report pages (staff with the campaign permissions, under /campaigns/): the cached report, never
recomputed per request."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evaluation.models import Campaign
from evaluation.report_page import report_context
from evaluation.services.campaigns import campaign_start


@staff_member_required
@permission_required("evaluation.view_campaign", raise_exception=True)
def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = (
        Campaign.objects.select_related("testset", "job")
        .defer("report")
        .annotate(n_systems=Count("systems", distinct=True), n_generations=Count("generations", distinct=True))
        .order_by("name")
    )
    return render(request, "campaigns/list.html", {"campaigns": campaigns})


@staff_member_required
@permission_required("evaluation.view_campaign", raise_exception=True)
def campaign_report(request: HttpRequest, name: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("job"), name=name)
    return render(request, "campaigns/report.html", report_context(campaign))


@staff_member_required
@permission_required("evaluation.view_campaign", raise_exception=True)
def campaign_report_json(request: HttpRequest, name: str) -> JsonResponse:
    campaign = get_object_or_404(Campaign, name=name)
    return JsonResponse(campaign.report, json_dumps_params={"indent": 2})


@staff_member_required
@permission_required("evaluation.change_campaign", raise_exception=True)
@require_POST
def campaign_recompute(request: HttpRequest, name: str) -> HttpResponse:
    """Run the campaign job: missing CHOSEN evaluations and RANDOM trials, then the report (sent to a
    worker once this request's transaction commits)."""
    campaign = get_object_or_404(Campaign, name=name)
    job = campaign_start(campaign=campaign, created_by=request.user)
    messages.info(request, f"Running the campaign and recomputing its report (job #{job.pk}).")
    return redirect("campaign-report", name=name)
