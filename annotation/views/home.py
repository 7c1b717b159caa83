from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Dataset, TestSet
from core.selectors import jobs_recent


@login_required
def home(request: HttpRequest) -> HttpResponse:
    context = {}
    if request.user.is_staff:  # each part for staff with the permission to view it (the template checks too)
        can = request.user.has_perm
        context = {
            "datasets": Dataset.objects.order_by("name") if can("annotation.view_dataset") else [],
            "testsets": TestSet.objects.select_related("dataset").order_by("-created_at")[:10]
            if can("annotation.view_testset")
            else [],
            "jobs": jobs_recent(limit=10) if can("core.view_job") else [],
        }
    return render(request, "home.html", context)
