"""What every page that scores a unit shares: the scale and its guidelines, the form's context and
reading the posted scores. The annotator page uses it, and so do the crowd app's pages (MTurk's
ExternalQuestion, signed links), so that a unit looks and submits the same everywhere."""

from django.http import HttpRequest
from django.utils import timezone
from django.utils.safestring import mark_safe  # constant markup of ours, never user text

from annotation.models import DEFAULT_ERROR_LABELS, Assignment, Dataset, Question
from annotation.selectors import question_preview_display, unit_display
from annotation.services.submission import Answer

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


def unit_preview_context(*, question: Question) -> dict:
    """A unit shown read only before anyone has it (MTurk's HIT preview): the same dialogue and
    scale as the form, the replies in a random order with random keys."""
    dataset = question.dataset
    return {
        "unit": question_preview_display(question=question),
        **scale_context(dataset=dataset),
        "labels": dataset.error_labels or DEFAULT_ERROR_LABELS,
    }


def unit_answers(request: HttpRequest, assignment: Assignment) -> tuple[dict[str, Answer], dict[str, dict]]:
    """The answers for the unit's own responses, and what was entered for each (to show it again)."""
    post = request.POST
    keys = [item["key"] for item in assignment.items]
    given = {k: {"value": post.get(f"score-{k}", ""), "labels": post.getlist(f"labels-{k}")} for k in keys}
    return {key: answer for key, answer in posted_answers(request).items() if key in given}, given


def posted_answers(request: HttpRequest) -> dict[str, Answer]:
    """Every ``score-<key>`` field of the form (the service checks the keys against the unit)."""
    answers = {}
    for name, raw in request.POST.items():
        if name.startswith("score-") and raw != "":
            key = name.removeprefix("score-")
            value = int_or_none(raw)
            answers[key] = Answer(value if value is not None else -1, request.POST.getlist(f"labels-{key}"))
    return answers


def int_or_none(raw) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None
