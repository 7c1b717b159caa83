"""The researcher dashboard (staff with the dataset permissions): progress, agreement, quality, annotators,
invitations."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth import login
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.forms import InviteForm
from annotation.job_params import QualityRefreshParams
from annotation.models import Annotator, Dataset, Invitation, QualitySnapshot
from annotation.selectors_agreement import overall_agreement
from annotation.selectors_annotators import dataset_members_panel
from annotation.selectors_dataset import attention_checks_status, dataset_progress, dataset_units_to_open
from annotation.services.annotators_admin import annotator_block_everywhere
from annotation.services.assignment import annotation_open
from annotation.services.invitations import (
    MIN_PASSWORD_LENGTH,
    annotator_invite_account,
    invitation_create,
    invitation_revoke,
    invite_accept,
    invite_dataset,
)
from annotation.workspace import workspace_memo, workspace_read
from core.errors import UserError
from core.forms import form_error_text
from core.selectors import job_params_q, jobs_for
from core.services.jobs import job_create


@staff_member_required
@permission_required("annotation.view_dataset", raise_exception=True)
def dashboard_index(request: HttpRequest) -> HttpResponse:
    datasets = [(d, dataset_progress(dataset=d)) for d in Dataset.objects.order_by("name")]
    return render(request, "dashboard/index.html", {"datasets": datasets, "overall": overall_agreement()})


@staff_member_required
@permission_required("annotation.view_dataset", raise_exception=True)
def dashboard_dataset(request: HttpRequest, name: str) -> HttpResponse:
    return _dataset_page(
        request, get_object_or_404(Dataset.objects.select_related("attention_check_repository"), name=name)
    )


def _dataset_page(request: HttpRequest, dataset: Dataset, *, status: int = 200) -> HttpResponse:
    """The dataset's workspace: the pipeline from import to release as steps (annotation.workspace),
    then agreement, annotators and this dataset's jobs."""
    steps, step_jobs = workspace_read(dataset=dataset, can=request.user.has_perm)
    context = {
        "dataset": dataset,
        "steps": steps,
        "attention_checks": attention_checks_status(dataset=dataset),
        "snapshot": workspace_memo(
            dataset, "snapshot", lambda: QualitySnapshot.objects.filter(dataset=dataset).first()
        ),
        "members_panel": dataset_members_panel(dataset=dataset),
        # the steps' jobs, and the agreement refresh (which a rating dataset has without a preview step)
        "jobs": jobs_for(
            match=step_jobs | job_params_q(kinds=[QualityRefreshParams.kind], key="dataset_id", value=dataset.pk),
            limit=8,
        ),
        "invite_url": request.session.pop("invite_url", ""),
        "new_password": request.session.pop("new_password", ""),
    }
    return render(request, "dashboard/dataset.html", context, status=status)


@staff_member_required
@permission_required("annotation.change_dataset", raise_exception=True)
@require_POST
def dashboard_refresh(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    job = job_create(params=QualityRefreshParams(dataset_id=dataset.pk), created_by=request.user)
    messages.info(request, f"Refreshing agreement and quality (job #{job.pk}).")
    return redirect("dashboard-dataset", name=name)


@staff_member_required
@permission_required("annotation.change_dataset", raise_exception=True)
@require_POST
def dashboard_open(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    if not dataset_units_to_open(dataset=dataset):
        messages.warning(request, "Nothing to open: every question of this dataset is a unit of work already.")
        return redirect("dashboard-dataset", name=name)
    units = annotation_open(dataset=dataset)
    messages.info(request, f"{units:,} units open for annotation.")
    return redirect("dashboard-dataset", name=name)


@staff_member_required
@permission_required("annotation.add_annotator", raise_exception=True)
@require_POST
def dashboard_invite(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    form = InviteForm(request.POST)
    if not form.is_valid():
        return dataset_page_refused(request, dataset, form_error_text(form))
    if form.cleaned_data["kind"] == "link":
        invitation, token = invitation_create(
            dataset=dataset,
            max_uses=form.cleaned_data["max_uses"],
            days=form.cleaned_data["days"],
            max_units=form.cleaned_data["max_units"],
            label=form.cleaned_data["label"],
            created_by=request.user,
        )
        request.session["invite_url"] = request.build_absolute_uri(reverse("invite-accept", args=[token]))
        return redirect("dashboard-dataset", name=name)
    try:
        user, password = annotator_invite_account(
            dataset=dataset, username=form.cleaned_data["username"], max_units=form.cleaned_data["max_units"]
        )
    except UserError as exc:
        return dataset_page_refused(request, dataset, str(exc))
    username = user.get_username()
    if password:
        request.session["new_password"] = f"{username} / {password}"
    messages.info(request, f"{username} can now annotate {dataset.name}.")
    return redirect("dashboard-dataset", name=name)


@staff_member_required
@permission_required("annotation.add_annotator", raise_exception=True)
@require_POST
def dashboard_invitation_revoke(request: HttpRequest, name: str, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(Invitation, pk=invitation_id, dataset__name=name)
    invitation_revoke(invitation=invitation)
    messages.info(request, "The link makes no more accounts; those it made stay members.")
    return redirect("dashboard-dataset", name=name)


def dataset_page_refused(request: HttpRequest, dataset: Dataset, message: str) -> HttpResponse:
    """The dataset's page again, with what was wrong with the request it posted (a 400: nothing was
    changed): an invitation, a member to add."""
    messages.error(request, message)
    return _dataset_page(request, dataset, status=400)


@staff_member_required
@permission_required("annotation.change_annotator", raise_exception=True)
@require_POST
def dashboard_block(request: HttpRequest, name: str, annotator_id: int) -> HttpResponse:
    """Block or unblock here and on every platform the annotator works on (a crowd worker: the
    platform of every batch they worked in, through the block the crowd app registers)."""
    annotator = get_object_or_404(Annotator, pk=annotator_id)
    block = request.POST.get("action") != "unblock"
    report = annotator_block_everywhere(
        annotator=annotator,
        block=block,
        reason="quality control" if block else "unblocked by the researcher",
        exclude_scores=request.POST.get("exclude") == "1",
    )
    text = report.message(worker=annotator, block=block)
    if not block:
        text += " Their scores count again."
    (messages.warning if report.failed or report.by_hand else messages.info)(request, text)
    return redirect("dashboard-dataset", name=name)


def invite_accept_view(request: HttpRequest, token: str) -> HttpResponse:
    try:
        dataset = invite_dataset(token=token)
    except UserError as exc:
        return render(request, "annotate/message.html", {"title": "Invitation", "message": str(exc)}, status=400)
    error = ""
    if request.method == "POST":
        try:
            user = invite_accept(
                token=token, username=request.POST.get("username", ""), password=request.POST.get("password", "")
            )
        except UserError as exc:
            error = str(exc)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("annotate-next")
    context = {"dataset": dataset, "error": error, "min_password_length": MIN_PASSWORD_LENGTH}
    return render(request, "dashboard/invite.html", context, status=400 if error else 200)
