from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Dataset, TestSet
from core.selectors import jobs_recent


@login_required
def home(request: HttpRequest) -> HttpResponse:
    context = {}
    if request.user.is_staff:
        context = {
            "datasets": Dataset.objects.order_by("name"),
            "testsets": TestSet.objects.select_related("dataset").order_by("-created_at")[:10],
            "jobs": jobs_recent(limit=10),
        }
    return render(request, "home.html", context)
