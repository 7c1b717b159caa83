"""The researcher's pages: the pair sets, and the keyboard-first review of one set's pairs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from core.errors import UserError
from pairs.models import Pair, PairSet, Review
from pairs.selectors import pair_set_list, pair_types, review_counts, review_queue, type_counts
from pairs.services.review import DECISIONS, pair_edit, pair_review

STATES = {"pending": Review.PENDING, "accepted": Review.ACCEPTED, "rejected": Review.REJECTED, "all": ""}


@staff_member_required
@permission_required("pairs.view_pair", raise_exception=True)
def pair_sets(request: HttpRequest) -> HttpResponse:
    return render(request, "pairs/list.html", {"pair_sets": pair_set_list()})


@staff_member_required
@permission_required("pairs.view_pair", raise_exception=True)
def pair_review_page(request: HttpRequest, name: str) -> HttpResponse:
    pair_set = get_object_or_404(PairSet, name=name)
    try:
        pair_type, state = _filters(request, pair_set)
        wanted = request.GET.get("pair")
        pair_id = int(wanted) if wanted else None
    except (ValueError, UserError) as error:
        return _page(request, pair_set, "", "pending", None, error=str(error), status=400)
    queue = review_queue(pair_set=pair_set, pair_type=pair_type, state=STATES[state])
    pair = get_object_or_404(pair_set.pairs, pk=pair_id) if pair_id is not None else queue.first()
    return _page(request, pair_set, pair_type, state, pair)


@staff_member_required
@permission_required("pairs.change_pair", raise_exception=True)
@require_POST
def pair_review_submit(request: HttpRequest, name: str, pair_id: int) -> HttpResponse:
    pair_set = get_object_or_404(PairSet, name=name)
    pair = get_object_or_404(pair_set.pairs, pk=pair_id)
    decision = request.POST.get("decision", "")
    pair_type, state = "", "pending"
    try:
        pair_type, state = _filters(request, pair_set, data=request.POST)
        if decision == "edit":
            pair_edit(pair_id=pair.pk, incorrect=request.POST.get("incorrect", ""), user=request.user)
        elif decision in DECISIONS:
            pair_review(pair_id=pair.pk, decision=decision, user=request.user)
        else:
            raise UserError(f"decision must be one of accept, reject, edit, pending (not {decision[:40]!r})")
    except UserError as error:  # the page again, with its filters, the pair and the reason
        return _page(request, pair_set, pair_type, state, pair, error=str(error), status=400)
    following = _following(pair_set, pair, pair_type=pair_type, state=state)
    query = {k: v for k, v in (("type", pair_type), ("state", state)) if v}
    if following is not None:
        query["pair"] = following
    elif decision != "pending":
        messages.info(request, "Nothing left to review with these filters.")
    return redirect(f"{reverse('pairs-review', args=[pair_set.name])}?{urlencode(query)}")


def _filters(request, pair_set: PairSet, *, data=None) -> tuple[str, str]:
    data = request.GET if data is None else data
    pair_type = data.get("type", "")
    state = data.get("state", "pending")
    if state not in STATES:
        raise UserError(f"state must be one of {', '.join(STATES)}")
    if pair_type and pair_type not in pair_types(pair_set=pair_set):
        raise UserError(f"pair set {pair_set.name!r} has no pair of type {pair_type[:40]!r}")
    return pair_type, state


def _following(pair_set: PairSet, pair: Pair, *, pair_type: str, state: str) -> int | None:
    """The next pair of the queue after this one, wrapping to the start (a pending pair just
    reviewed has left the pending queue)."""
    queue = review_queue(pair_set=pair_set, pair_type=pair_type, state=STATES[state]).exclude(pk=pair.pk)
    nxt = queue.filter(pk__gt=pair.pk).values_list("pk", flat=True).first()
    return nxt if nxt is not None else queue.values_list("pk", flat=True).first()


def _page(request, pair_set, pair_type, state, pair, *, error: str = "", status: int = 200) -> HttpResponse:
    queue = review_queue(pair_set=pair_set, pair_type=pair_type, state=STATES.get(state, Review.PENDING))
    context = {
        "pair_set": pair_set,
        "pair": pair,
        "pair_type": pair_type,
        "state": state,
        "states": list(STATES),
        "types": pair_types(pair_set=pair_set),
        "counts": review_counts(pair_set=pair_set, pair_type=pair_type),
        "by_type": type_counts(pair_set=pair_set),
        "queue_size": queue.count(),
        "error": error,
    }
    if pair is not None:
        context.update(
            correct_parts=_parts(pair.correct, pair.correct_start, pair.correct_end),
            incorrect_parts=_parts(pair.incorrect, pair.incorrect_start, pair.incorrect_end),
            previous=queue.filter(pk__lt=pair.pk).order_by("-pk").values_list("pk", flat=True).first(),
            next=queue.filter(pk__gt=pair.pk).values_list("pk", flat=True).first(),
            details={k: v for k, v in pair.provenance.items() if k not in ("method", "seed")},
        )
    return render(request, "pairs/review.html", context, status=status)


def _parts(text: str, start: int, end: int) -> tuple[str, str, str]:
    return text[:start], text[start:end], text[end:]
