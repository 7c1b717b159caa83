"""The pool review page (staff): one question's dialogue beside its ground truth and candidates,
with every retriever's ranks, the reason each missing rank is no candidate, the scores and the
filter rules' decisions; paged through with the keyboard."""

from bisect import bisect_left, bisect_right

from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Dataset, Question
from annotation.selectors import filter_rules_current
from core.errors import UserError
from retrieval.selectors import (
    FALSE_DECISIONS,
    GROUND_TRUTH_DECISIONS,
    SOURCES,
    PoolFilters,
    pool_filters_check,
    pool_index,
    pool_question,
)

WINDOW = 10  # questions listed before and after the one shown


@staff_member_required
@permission_required("annotation.view_question", raise_exception=True)
def pool_review(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    try:
        if dataset.is_rating:
            raise UserError(f"dataset {dataset.name!r} rates generated responses 1-5: it has no candidate pools")
        filters = pool_filters_check(
            source=request.GET.get("source", ""),
            decision=request.GET.get("decision", ""),
            ground_truth=request.GET.get("ground_truth", ""),
        )
        wanted = request.GET.get("q", "")
        if wanted and not wanted.isdigit():
            raise UserError(f"q must be a question id (a whole number), not {wanted[:40]!r}")
    except UserError as error:
        context = {"dataset": dataset, "error": str(error), "filters": PoolFilters(), **_choices()}
        return render(request, "pools/review.html", context, status=400)
    rules = filter_rules_current()
    index = pool_index(dataset=dataset, rules=rules, filters=filters)
    ids = index.question_ids
    question_id = int(wanted) if wanted else (ids[0] if ids else None)
    context = {"dataset": dataset, "filters": filters, "index": index, "rules": rules, **_choices()}
    if question_id is not None:
        question = (
            Question.objects.filter(pk=question_id, dataset=dataset, derived_from__isnull=True)
            .select_related("context", "dataset")
            .first()
        )
        if question is None:
            raise Http404(f"dataset {dataset.name} has no original question {question_id}")
        position = bisect_left(ids, question_id)
        listed = position < len(ids) and ids[position] == question_id
        before, after = ids[:position], ids[bisect_right(ids, question_id) :]
        context.update(
            pool_question(question=question, rules=rules, filters=filters),
            position=position + 1 if listed else None,
            listed=listed,
            previous=before[-1] if before else None,
            next=after[0] if after else None,
            window=ids[max(position - WINDOW, 0) : position + WINDOW + 1],
        )
    return render(request, "pools/review.html", context)


def _choices() -> dict:
    return {"sources": SOURCES, "decisions": FALSE_DECISIONS, "ground_truths": GROUND_TRUTH_DECISIONS}
