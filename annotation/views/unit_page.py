"""What every page that scores a unit shares: the scale and its guidelines, the form's context and
reading the posted scores. The annotator page uses it, and so do the crowd app's pages (MTurk's
ExternalQuestion, signed links), so that a unit looks and submits the same everywhere."""

from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone
from django.utils.safestring import mark_safe  # constant markup of ours, never user text

from annotation.forms import UnitAnswersForm
from annotation.models import DEFAULT_ERROR_LABELS, Assignment, Dataset, Question
from annotation.selectors_display import question_preview_display, unit_display
from annotation.services.submission import Answer
from core.errors import UserError
from core.forms import form_error_text

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


@dataclass(frozen=True)
class PostedUnit:
    answers: dict[str, Answer]
    duration_ms: int | None


def unit_posted(request: HttpRequest, *, assignment: Assignment | None = None) -> PostedUnit:
    """The scores, reasons and time taken that a unit's form posted; a bad value is a UserError
    naming it (the page shows it with a 400). With ``assignment``, only its responses are read;
    without, every ``score-<key>`` (the service checks the keys against the unit)."""
    keys = [item["key"] for item in assignment.items] if assignment is not None else None
    form = UnitAnswersForm(request.POST, keys=keys)
    if not form.is_valid():
        raise UserError(form_error_text(form))
    return PostedUnit(form.answers(), form.cleaned_data["duration_ms"])


def unit_given(request: HttpRequest, assignment: Assignment) -> dict[str, dict]:
    """What was entered for each of the unit's responses, to show it again beside an error."""
    post = request.POST
    return {
        key: {"value": post.get(f"score-{key}", ""), "labels": post.getlist(f"labels-{key}")}
        for key in (item["key"] for item in assignment.items)
    }
