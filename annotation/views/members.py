"""The dashboard's members of a dataset: add existing annotator accounts, take members off."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.forms import MembersAddForm
from annotation.models import Annotator, Dataset
from annotation.services.annotators_membership import member_remove, members_add
from core.errors import UserError
from core.forms import form_error_text

from .dashboard import dataset_page_refused


@staff_member_required
@permission_required("annotation.add_datasetmembership", raise_exception=True)
@require_POST
def dashboard_members_add(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    form = MembersAddForm(request.POST)
    if not form.is_valid():
        return dataset_page_refused(request, dataset, form_error_text(form))
    annotators = list(form.cleaned_data["annotators"])
    try:
        added = members_add(dataset=dataset, annotators=annotators, max_units=form.cleaned_data["max_units"])
    except UserError as exc:
        return dataset_page_refused(request, dataset, str(exc))
    names = ", ".join(str(a) for a in annotators)
    messages.info(request, f"{names} can now annotate {dataset.name} ({added} new member(s)).")
    return redirect("dashboard-dataset", name=name)


@staff_member_required
@permission_required("annotation.delete_datasetmembership", raise_exception=True)
@require_POST
def dashboard_members_remove(request: HttpRequest, name: str, annotator_id: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    annotator = get_object_or_404(Annotator, pk=annotator_id)
    removal = member_remove(dataset=dataset, annotator=annotator)
    messages.info(request, removal.message(annotator=annotator, dataset=dataset))
    return redirect("dashboard-dataset", name=name)
