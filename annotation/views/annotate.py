"""The annotator page: one unit at a time, keyboard first, nothing that gives the ground truth away."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus
from annotation.selectors_annotators import (
    annotator_dataset_current,
    annotator_progress,
    correction_deadline,
    unit_answers_submitted,
    unit_correctable,
)
from annotation.services.assignment import unit_current, unit_next
from annotation.services.correction import unit_correct
from annotation.services.submission import unit_submit
from core.errors import UserError

from .unit_page import unit_form_context, unit_given, unit_posted


def _annotator(request: HttpRequest) -> Annotator | None:
    # Through the user's reverse relation, so that the page's menu (user.annotator) reuses it.
    try:
        return request.user.annotator
    except Annotator.DoesNotExist:
        return None


def _not_an_annotator(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "annotate/message.html",
        {
            "title": "No annotation work for this account",
            "message": "Your account is not set up as an annotator. Ask your researcher for an invitation.",
        },
        status=403,
    )


@login_required
def annotate_next(request: HttpRequest) -> HttpResponse:
    annotator = _annotator(request)
    if annotator is None:
        return _not_an_annotator(request)
    # Only units of the dataset they chose on the start page (None: any of theirs).
    dataset = annotator_dataset_current(annotator=annotator)
    try:
        assignment = unit_next(annotator=annotator, dataset=dataset)
    except UserError as exc:
        return render(request, "annotate/message.html", {"title": "Annotation paused", "message": str(exc)}, status=403)
    if assignment is None:
        return render(
            request,
            "annotate/done.html",
            {
                "progress": annotator_progress(annotator=annotator, dataset=dataset),
                "dataset": dataset,
                "correctable": unit_correctable(annotator=annotator),
            },
        )
    # The unit is shown right here (its form posts to the unit's own URL): one round trip per unit
    # instead of a redirect and a second request. Reloading shows the same leased unit.
    return _unit_page(request, annotator, assignment)


@login_required
def annotate_unit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    annotator = _annotator(request)
    if annotator is None:
        return _not_an_annotator(request)
    error = ""
    if request.method == "POST":
        # The service loads (and locks) the unit itself: the page is only loaded again on an error.
        try:
            posted = unit_posted(request)
            unit_submit(
                assignment_id=assignment_id,
                annotator=annotator,
                answers=posted.answers,
                duration_ms=posted.duration_ms,
            )
        except UserError as exc:
            error = str(exc)
        else:
            return redirect("annotate-next")
    assignment = get_object_or_404(
        Assignment.objects.select_related("question__dataset"), pk=assignment_id, annotator=annotator
    )
    if not error and assignment.status == AssignmentStatus.SUBMITTED:
        return redirect("annotate-next")
    if assignment.status != AssignmentStatus.LEASED and not error:
        return render(
            request,
            "annotate/message.html",
            {
                "title": "This unit is no longer yours",
                "message": "Its time ran out and it went to someone else. Your next unit is waiting.",
                "next": True,
            },
        )
    given = unit_given(request, assignment) if error else {}
    return _unit_page(request, annotator, assignment, error=error, given=given)


def _unit_page(
    request: HttpRequest, annotator: Annotator, assignment: Assignment, *, error: str = "", given: dict | None = None
) -> HttpResponse:
    dataset = annotator_dataset_current(annotator=annotator)
    context = {
        **unit_form_context(assignment=assignment, error=error, given=given),
        "assignment": assignment,
        "progress": annotator_progress(annotator=annotator, dataset=dataset),
        "correctable": unit_correctable(annotator=annotator),
    }
    return render(request, "annotate/unit.html", context, status=400 if error else 200)


@login_required
def annotate_correct(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The scores of a unit the annotator submitted, to correct within the window after submitting."""
    annotator = _annotator(request)
    if annotator is None:
        return _not_an_annotator(request)
    assignment = get_object_or_404(
        Assignment.objects.select_related("question__dataset"), pk=assignment_id, annotator=annotator
    )
    deadline = correction_deadline(assignment)
    if deadline is None or timezone.now() > deadline:
        return render(
            request,
            "annotate/message.html",
            {
                "title": "This unit cannot be corrected",
                "message": "Scores can be corrected only for a short while after the unit was submitted.",
                "next": True,
            },
            status=400 if request.method == "POST" else 200,
        )
    error = ""
    if request.method == "POST":
        try:
            changed = unit_correct(
                assignment_id=assignment.pk, annotator=annotator, answers=unit_posted(request).answers
            )
        except UserError as exc:
            error = str(exc)
        else:
            text = f"{changed} score{'s' if changed != 1 else ''} corrected." if changed else "No score changed."
            messages.info(request, text)
            return redirect("annotate-next")
    given = unit_given(request, assignment) if error else unit_answers_submitted(assignment=assignment)
    context = {
        **unit_form_context(assignment=assignment, error=error, given=given),
        "assignment": assignment,
        "progress": annotator_progress(annotator=annotator, dataset=annotator_dataset_current(annotator=annotator)),
        "correcting": True,
        "seconds_left": max(0, int((deadline - timezone.now()).total_seconds())),
    }
    return render(request, "annotate/unit.html", context, status=400 if error else 200)


@login_required
def annotate_pause(request: HttpRequest) -> HttpResponse:
    annotator = _annotator(request)
    if annotator is None:
        return _not_an_annotator(request)
    return render(
        request,
        "annotate/paused.html",
        {"current": unit_current(annotator=annotator), "progress": annotator_progress(annotator=annotator)},
    )
