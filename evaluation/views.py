"""Campaign report pages (staff with the campaign permissions, under /campaigns/): the cached report, never
recomputed per request."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Dataset
from core.errors import UserError
from evaluation.forms import CampaignNewForm
from evaluation.models import Campaign
from evaluation.report_page import report_context
from evaluation.services.campaign_setup import campaign_launch
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


@staff_member_required
@permission_required("evaluation.add_campaign", raise_exception=True)
def campaign_new(request: HttpRequest) -> HttpResponse:
    """Create a campaign and start its job on one page (``?dataset=NAME``: that dataset's test sets
    and pair sets); then its report page, which follows the job."""
    name = request.GET.get("dataset", "")
    dataset = Dataset.objects.filter(name=name).first() if name and len(name) <= 100 else None
    form = CampaignNewForm(request.POST if request.method == "POST" else None, dataset=dataset)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            campaign, job = campaign_launch(
                name=data["name"],
                system_names=[s.name for s in data["systems"]],
                testset_name=data["testset"].name if data["testset"] else None,
                pair_set_name=data["pair_set"].name if data["pair_set"] else None,
                repository_name=data["repository"].name if data["repository"] else None,
                random_trials=data["random_trials"],
                description=data["description"],
                created_by=request.user,
            )
        except UserError as exc:
            form.add_error(None, str(exc))
        else:
            messages.info(request, f"Campaign {campaign.name} created; its job #{job.pk} scores the systems.")
            return redirect("campaign-report", name=campaign.name)
    context = {"form": form, "dataset": dataset}
    return render(request, "campaigns/new.html", context, status=400 if form.is_bound else 200)
