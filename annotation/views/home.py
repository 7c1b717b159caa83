from collections.abc import Callable, Iterable

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Annotator, Dataset
from annotation.selectors_annotators import annotator_dataset_current, annotator_datasets
from annotation.services.annotators_membership import ANY_DATASET, annotator_dataset_choose
from core.errors import UserError
from core.selectors import jobs_recent

# Lists of a higher app on the staff's home page (testsets: the newest test sets), registered from
# its AppConfig.ready(): the template's name for the list, the permission to see it, its rows.
_lists: dict[str, tuple[str, Callable[[], Iterable]]] = {}


def home_list_register(name: str, *, permission: str, rows: Callable[[], Iterable]) -> None:
    _lists[name] = (permission, rows)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    context = {}
    if request.user.is_staff:  # each part for staff with the permission to view it (the template checks too)
        can = request.user.has_perm
        context = {
            "datasets": Dataset.objects.order_by("name") if can("annotation.view_dataset") else [],
            "jobs": jobs_recent(limit=10) if can("core.view_job") else [],
        }
        context.update({name: rows() if can(permission) else [] for name, (permission, rows) in _lists.items()})
    else:
        annotator = Annotator.objects.filter(user=request.user).first()
        if annotator is not None:
            context = _choice_context(annotator)
    return render(request, "home.html", context)


def _choice_context(annotator: Annotator, *, error: str = "") -> dict:
    """The annotator's datasets and the one they chose (an annotator of several picks one, or any)."""
    chosen = annotator_dataset_current(annotator=annotator)
    return {
        "my_datasets": annotator_datasets(annotator=annotator),
        "chosen": chosen.name if chosen else ANY_DATASET,
        "any_dataset": ANY_DATASET,
        "choice_error": error,
    }


@login_required
@require_POST
def annotate_choose(request: HttpRequest) -> HttpResponse:
    """Record the dataset the annotator works on (or any), then go to their next unit."""
    annotator = Annotator.objects.filter(user=request.user).first()
    if annotator is None:
        return render(
            request,
            "annotate/message.html",
            {"title": "No annotation work for this account", "message": "Your account is not set up as an annotator."},
            status=403,
        )
    try:
        annotator_dataset_choose(annotator=annotator, dataset_name=request.POST.get("dataset", ""))
    except UserError as exc:
        return render(request, "home.html", _choice_context(annotator, error=str(exc)), status=400)
    return redirect("annotate-next")
