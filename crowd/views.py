"""Crowd workers' pages: MTurk's ExternalQuestion (framed by MTurk, no login) and signed links.

Workers have no account: MTurk's assignmentId/hitId/workerId are checked against our published
HITs, and the page they work on posts back with a signed token for their assignment (MTurk frames
us on its own site, where the browser may not send our session cookie), kept in the session too.
"""

from csp.constants import SELF
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotation.models import Annotator, AssignmentStatus
from annotation.views.unit_page import unit_form_context, unit_given, unit_posted, unit_preview_context
from core.errors import UserError
from core.throttling import client_ip
from crowd.providers.link import link_token
from crowd.providers.mturk_entry import PREVIEW_ASSIGNMENT, answers_encode, mturk_enter, submit_to_check, task_for_hit
from crowd.providers.registry import provider_class
from crowd.selectors import link_batch, link_done, link_progress, link_units_due, unit_from_token, unit_token
from crowd.services.work import EntryLimitError, crowd_unit_submit, link_unit_next, link_worker_enter

_SESSION_KEY = "crowd_assignments"


def _framable(response: HttpResponse, *, submits_to_platform: bool = False) -> HttpResponse:
    """MTurk shows the page in a frame on its own site: the site's Content-Security-Policy with
    exactly those sites as frame ancestors (django-csp's middleware writes it; this is what its
    ``csp_replace`` decorator sets, with the hosts read per request).

    The page that hands the assignment to MTurk posts its form to turkSubmitTo (one of those
    hosts, checked), and Chrome holds every redirect after a form post to ``form-action`` too:
    wherever MTurk sends the worker next must not be refused, so that page has no
    ``form-action``. It shows no text of anyone's, only the checked address and two hidden fields."""
    hosts = [*settings.WELLCHOSEN_CROWD_SUBMIT_HOSTS, *settings.WELLCHOSEN_CROWD_FRAME_HOSTS]
    replace = {"frame-ancestors": [SELF, *dict.fromkeys(hosts)]}
    if submits_to_platform:
        replace["form-action"] = None
    response._csp_replace = replace
    return response


def _message(request: HttpRequest, title: str, message: str, status: int = 200) -> HttpResponse:
    return _framable(render(request, "crowd/message.html", {"title": title, "message": message}, status=status))


def _remember(request: HttpRequest, crowd_assignment_id: int) -> None:
    known = request.session.get(_SESSION_KEY, [])
    if crowd_assignment_id not in known:
        request.session[_SESSION_KEY] = [*known[-49:], crowd_assignment_id]


@xframe_options_exempt
@require_http_methods(["GET"])
def crowd_mturk(request: HttpRequest) -> HttpResponse:
    """The ExternalURL of every HIT. Preview (assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE): the unit,
    read only. Accepted: the worker's own unit to score."""
    params = request.GET
    assignment_id = params.get("assignmentId", "")
    try:
        if assignment_id in ("", PREVIEW_ASSIGNMENT):
            task = task_for_hit(hit_id=params.get("hitId", ""))
            return _framable(render(request, "crowd/unit.html", _preview_context(task)))
        ca = mturk_enter(
            hit_id=params.get("hitId", ""),
            assignment_id=assignment_id,
            worker_id=params.get("workerId", ""),
            submit_to=params.get("turkSubmitTo", ""),
        )
    except UserError as exc:
        return _message(request, "This HIT cannot be worked on", str(exc), status=403)
    _remember(request, ca.pk)
    if ca.assignment.status == AssignmentStatus.SUBMITTED:
        return _submit_page(request, ca, "")
    return _unit_page(request, ca)


@csrf_exempt  # the signed token in the URL is the proof (no cookie reaches a framed page reliably)
@xframe_options_exempt
@require_http_methods(["GET", "POST"])
def crowd_unit(request: HttpRequest, token: str) -> HttpResponse:
    try:
        ca = unit_from_token(token=token)
    except UserError as exc:
        return _message(request, "This work link is not valid", str(exc), status=403)
    if request.method != "POST":
        return _unit_page(request, ca)
    try:
        posted = unit_posted(request, assignment=ca.assignment)
        crowd_unit_submit(crowd_assignment=ca, answers=posted.answers, duration_ms=posted.duration_ms)
    except UserError as exc:
        return _unit_page(request, ca, error=str(exc), given=unit_given(request, ca.assignment), status=400)
    if provider_class(ca.provider).hands_in_on_platform:
        return _submit_page(request, ca, answers_encode(posted.answers))
    return redirect("crowd-link-next", token=link_token(batch=ca.batch))


def _unit_page(request, ca, *, error: str = "", given: dict | None = None, status: int = 200) -> HttpResponse:
    assignment = ca.assignment
    if assignment.status != AssignmentStatus.LEASED and not error:
        return _message(request, "This unit is closed", "It was submitted already or its time ran out.")
    context = {
        **unit_form_context(assignment=assignment, error=error, given=given),
        "action": reverse("crowd-unit", args=[unit_token(crowd_assignment=ca)]),
        "preview": False,
        "progress": None,
    }
    if provider_class(ca.provider).enters_by_link:  # "unit n of N" through the batch's link
        context["progress"] = link_progress(batch=ca.batch, worker=ca.worker)
    return _framable(render(request, "crowd/unit.html", context, status=status))


def _preview_context(task) -> dict:
    """What a worker sees before accepting: the dialogue and the replies, inputs disabled; the
    order is random and nothing marks the ground truth."""
    return {**unit_preview_context(question=task.question), "preview": True, "action": ""}


def _submit_page(request, ca, answers: str) -> HttpResponse:
    """The auto-submitting form that hands the assignment to MTurk (scores are already saved)."""
    try:
        action = submit_to_check(url=ca.submit_to)
    except UserError as exc:
        return _message(request, "Your scores are saved", f"but they cannot be sent to MTurk from here: {exc}", 400)
    context = {"action": action, "assignment_id": ca.external_id, "answers": answers}
    return _framable(render(request, "crowd/submit.html", context), submits_to_platform=True)


@xframe_options_exempt
@require_http_methods(["GET"])
def crowd_link(request: HttpRequest, token: str) -> HttpResponse:
    """A link worker arrives with their id (?worker=, or Prolific's PROLIFIC_PID)."""
    try:
        batch = link_batch(token=token)
        worker = link_worker_enter(batch=batch, params=request.GET, address=client_ip(request))
    except EntryLimitError as exc:
        return _message(request, "Too many workers from your network", str(exc), status=429)
    except UserError as exc:
        return _message(request, "This link cannot be used", str(exc), status=403)
    request.session[f"crowd_link_{batch.pk}"] = token
    request.session[f"crowd_link_worker_{batch.pk}"] = worker.pk
    return redirect("crowd-link-next", token=token)


@xframe_options_exempt
@require_http_methods(["GET"])
def crowd_link_next(request: HttpRequest, token: str) -> HttpResponse:
    try:
        batch = link_batch(token=token)
        worker = Annotator.objects.filter(pk=request.session.get(f"crowd_link_worker_{batch.pk}")).first()
        if worker is None:
            raise UserError("open the study from the link you were given (it carries your worker id)")
        ca = link_unit_next(batch=batch, worker=worker)
    except EntryLimitError as exc:
        return _message(request, "Too much unconfirmed work from your network", str(exc), status=429)
    except UserError as exc:
        return _message(request, "No work here", str(exc), status=403)
    if ca is None:
        # The completion code says the worker finished their share: never before.
        done = link_done(batch=batch, worker=worker)
        if not done:
            return _message(request, "Nothing left to score", "All units of this study are taken or done. Thank you!")
        if done < link_units_due(batch=batch, worker=worker):
            return _message(
                request,
                "Nothing left to score for now",
                f"Your {done} scored unit(s) are saved. The other units of this study are taken for now: "
                "come back later with the same link to finish your share and get the completion code.",
            )
        return _framable(
            render(request, "crowd/done.html", {"code": batch.completion_code, "done": done, "batch": batch})
        )
    _remember(request, ca.pk)
    return redirect("crowd-unit", token=unit_token(crowd_assignment=ca))
