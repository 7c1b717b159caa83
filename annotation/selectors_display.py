"""Reads: what the annotation pages show of a dialogue (its turns, a unit's responses, a question's
preview), the one place that decides speakers, sides and the order of responses."""

import random
import secrets

from annotation.models import Candidate, Turn


def dialogue_turns_display(*, context_id: int) -> list[dict]:
    """A context's turns as every page shows them (the one place that decides speakers and sides):
    each turn's own speaker, or A/B alternating where none is named; the first speaker's turns on
    the left, everyone else's on the right."""
    turns = list(Turn.objects.filter(context_id=context_id).order_by("position").values_list("speaker", "text"))
    speakers = [speaker or "AB"[i % 2] for i, (speaker, _) in enumerate(turns)]
    return [
        {"speaker": s, "side": "left" if s == speakers[0] else "right", "text": t}
        for s, (_, t) in zip(speakers, turns, strict=True)
    ]


def unit_display(*, assignment) -> dict:
    """What the annotator page shows: the context turns and the responses under their opaque keys,
    in the assignment's shuffled order (nothing marks the ground truth)."""
    texts = dict(
        Candidate.objects.filter(
            id__in=[i["candidate_id"] for i in assignment.items if "candidate_id" in i]
        ).values_list("id", "text")
    )
    responses = [
        {"key": item["key"], "text": item["text"] if item.get("check") else texts[item["candidate_id"]]}
        for item in assignment.items
    ]
    return {"turns": dialogue_turns_display(context_id=assignment.question.context_id), "responses": responses}


def question_preview_display(*, question) -> dict:
    """A question shown before anyone has it (MTurk's HIT preview): its turns as on the annotator
    page, its candidates in a random order under random keys (nothing marks the ground truth)."""
    texts = list(question.candidates.values_list("text", flat=True))
    random.shuffle(texts)
    return {
        "turns": dialogue_turns_display(context_id=question.context_id),
        "responses": [{"key": secrets.token_hex(4), "text": text, "value": "", "labels": []} for text in texts],
    }
