"""The annotator page: one unit at a time, keyboard first, nothing that gives the ground truth away."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe  # constant markup of ours, never user text

from annotation.models import DEFAULT_ERROR_LABELS, Annotator, Assignment, AssignmentStatus, Dataset
from annotation.selectors import annotator_progress, unit_display
from annotation.services.assignment import unit_current, unit_next
from annotation.services.submission import Answer, unit_submit
from core.errors import UserError

GUIDELINES = [
    (5, "Clearly appropriate", "a natural, fitting reply to this context"),
    (4, "Appropriate", "fits, with small flaws"),
    (3, "Acceptable", "could be said here, but is not a good reply"),
    (2, "Hardly appropriate", "a stretch for this context"),
    (1, "Not appropriate at all", "cannot be regarded as a reply to this context"),
    (0, "Ungrammatical", "not a sentence"),
]
# Rating generated responses (Zhao et al. 2020): 1-5, no "ungrammatical" 0.
RATING_GUIDELINES = [
    (5, "Very good", "a very good, appropriate response to this context"),
    (4, "Good", "appropriate, with small flaws"),
    (3, "Acceptable", "could be said here, but is not a good response"),
    (2, "Poor", "hardly appropriate for this context"),
    (1, "Not appropriate at all", "cannot be regarded as a response to this context"),
]


def scale_context(*, dataset: Dataset) -> dict:
    """The scale and its instructions for the dataset's task: the form's radio buttons, the
    guidelines panel and the keys named there all come from here."""
    if dataset.is_rating:
        return {
            "guidelines": RATING_GUIDELINES,
            "guidelines_title": "How to rate",
            "instructions": mark_safe(
                "Rate each response: how good and appropriate is it as the <em>next</em> turn of this dialogue?"
            ),
            "score_min": dataset.min_score,
        }
    return {
        "guidelines": GUIDELINES,
        "guidelines_title": "How to score",
        "instructions": mark_safe("How appropriate is each response as the <em>next</em> turn of this dialogue?"),
        "score_min": 0,
    }


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
    try:
        assignment = unit_next(annotator=annotator)
    except UserError as exc:
        return render(request, "annotate/message.html", {"title": "Annotation paused", "message": str(exc)}, status=403)
    if assignment is None:
        return render(request, "annotate/done.html", {"progress": annotator_progress(annotator=annotator)})
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
            unit_submit(
                assignment_id=assignment_id,
                annotator=annotator,
                answers=_posted_answers(request),
                duration_ms=_int(request.POST.get("duration_ms")),
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
    given = _answers(request, assignment)[1] if error else {}
    return _unit_page(request, annotator, assignment, error=error, given=given)


def _unit_page(
    request: HttpRequest, annotator: Annotator, assignment: Assignment, *, error: str = "", given: dict | None = None
) -> HttpResponse:
    context = {
        **unit_form_context(assignment=assignment, error=error, given=given),
        "assignment": assignment,
        "progress": annotator_progress(annotator=annotator),
    }
    return render(request, "annotate/unit.html", context, status=400 if error else 200)


def unit_form_context(*, assignment: Assignment, error: str = "", given: dict | None = None) -> dict:
    """What a unit's scoring form shows, on our annotator page and on the crowd page alike."""
    unit = unit_display(assignment=assignment)
    for response in unit["responses"]:  # keep what was entered when the form comes back with an error
        response.update((given or {}).get(response["key"], {"value": "", "labels": []}))
    return {
        "unit": unit,
        "error": error,
        **scale_context(dataset=assignment.question.dataset),
        "labels": assignment.question.dataset.error_labels or DEFAULT_ERROR_LABELS,
        "seconds_left": max(0, int((assignment.leased_until - timezone.now()).total_seconds())),
    }


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


def _answers(request: HttpRequest, assignment: Assignment) -> tuple[dict[str, Answer], dict[str, dict]]:
    """The answers for the unit's own responses, and what was entered for each (to show it again)."""
    post = request.POST
    keys = [item["key"] for item in assignment.items]
    given = {k: {"value": post.get(f"score-{k}", ""), "labels": post.getlist(f"labels-{k}")} for k in keys}
    return {key: answer for key, answer in _posted_answers(request).items() if key in given}, given


def _posted_answers(request: HttpRequest) -> dict[str, Answer]:
    """Every ``score-<key>`` field of the form (the service checks the keys against the unit)."""
    answers = {}
    for name, raw in request.POST.items():
        if name.startswith("score-") and raw != "":
            key = name.removeprefix("score-")
            value = _int(raw)
            answers[key] = Answer(value if value is not None else -1, request.POST.getlist(f"labels-{key}"))
    return answers


def _int(raw) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None
