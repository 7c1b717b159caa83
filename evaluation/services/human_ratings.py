"""Collecting human ratings of generated responses with the annotation machinery (Zhao et al. 2020).

A rating dataset (``Dataset.task == RATE``) has one question per context that the generations
answered: the context's turns, the reference as ground truth, and one candidate per distinct
response text. Annotators rate every response of a unit 1-5 on the annotator or crowd page, the
reference among them (as Zhao et al. rate the ground truth too); their ``Score`` rows hang on the
candidate that ``GeneratedResponse.candidate`` points to, which ``evaluation.selectors.human_ratings``
reads back per system.
"""

from dataclasses import dataclass, field

from django.db import transaction

from annotation.models import (
    Candidate,
    CandidateSource,
    Context,
    Dataset,
    DatasetTask,
    Question,
    QuestionWork,
    Turn,
)
from annotation.services.datasets import dataset_name_check, dataset_save
from core.errors import UserError
from core.text import clean_text, text_hash
from evaluation.models import GeneratedResponse, Generation
from evaluation.selectors import context_turns


@dataclass
class _ContextGroup:
    """The responses of all generations to one context (one question of the rating dataset)."""

    key: str
    turns: list[str]
    reference: str
    first_generation: int
    responses: list[dict] = field(default_factory=list)


def rating_dataset_create(
    *,
    name: str,
    generation_ids: list[int],
    annotators_per_item: int = 5,
    include_reference: bool = True,
    description: str = "",
) -> Dataset:
    """A "rate this response 1-5" dataset of the generations' responses, open for annotation.

    One question per distinct ``context_key``; identical responses of several systems to one
    context share one candidate (and so one set of ratings). With ``include_reference`` the
    context's first reference is rated too, as the question's ground truth; it also serves the
    quality checks (annotators who rate references low are flagged). Every response gets all
    ``annotators_per_item`` ratings: adaptive stopping never applies to a rating dataset.
    All or nothing: one transaction.
    """
    dataset_name_check(name=name)
    if annotators_per_item < 1:
        raise UserError("annotators_per_item must be at least 1")
    ids = list(dict.fromkeys(generation_ids))
    if not ids:
        raise UserError("give at least one generation to rate")
    with transaction.atomic():
        if Dataset.objects.filter(name=name).exists():
            raise UserError(f"a dataset named {name!r} exists already; choose a new name")
        groups = _context_groups(ids)
        dataset = dataset_save(
            dataset=Dataset(
                name=name,
                description=description,
                task=DatasetTask.RATE,
                annotators_per_item=annotators_per_item,
                context_turns=max(len(g.turns) for g in groups),
            )
        )
        _questions_create(dataset=dataset, groups=groups, include_reference=include_reference)
    return dataset


def _context_groups(ids: list[int]) -> list[_ContextGroup]:
    """The responses grouped by context, contexts in the order the generations list them."""
    generations = {g["id"]: g for g in Generation.objects.filter(pk__in=ids).values("id", "system__name")}
    unknown = [str(i) for i in ids if i not in generations]
    if unknown:
        raise UserError(f"no generation with id {', '.join(unknown)}")
    responses = list(
        GeneratedResponse.objects.filter(generation_id__in=ids).values(
            "id",
            "generation_id",
            "question_id",
            "question__context_id",
            "context_key",
            "context",
            "references",
            "text",
            "candidate__question__dataset__name",
            "candidate__question__dataset__task",
        )
    )
    found = {r["generation_id"] for r in responses}
    empty = [f"{i} ({generations[i]['system__name']})" for i in ids if i not in found]
    if empty:
        raise UserError(f"generation {', '.join(empty)} has no responses to rate")
    rated = next((r for r in responses if r["candidate__question__dataset__task"] == DatasetTask.RATE), None)
    if rated is not None:
        # Pointing the response at a new candidate would cut it off from the ratings it has.
        raise UserError(
            f"the responses of generation {rated['generation_id']} are already being rated in dataset "
            f"{rated['candidate__question__dataset__name']!r}"
        )
    position = {gid: i for i, gid in enumerate(ids)}
    responses.sort(key=lambda r: (position[r["generation_id"]], r["id"]))
    # turns of the questions answered, for responses stored without their context
    question_turns = context_turns(
        context_ids={r["question__context_id"] for r in responses if not r["context"]} - {None}
    )
    groups: dict[str, _ContextGroup] = {}
    for r in responses:
        turns = _turns(r, question_turns)
        group = groups.get(r["context_key"])
        if group is None:
            group = groups[r["context_key"]] = _ContextGroup(
                key=r["context_key"],
                turns=turns,
                reference=clean_text(r["references"][0]) if r["references"] else "",
                first_generation=r["generation_id"],
            )
        elif turns != group.turns:
            raise UserError(
                f"context {r['context_key']!r} differs between generation {group.first_generation} and "
                f"generation {r['generation_id']}; responses to one context_key must share its turns"
            )
        group.responses.append(r)
    return list(groups.values())


def _turns(response: dict, question_turns: dict[int, list[str]]) -> list[str]:
    raw = response["context"] or question_turns.get(response["question__context_id"], [])
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise UserError(f"response {response['id']}: its context should be a list of turns (strings)")
    turns = [clean_text(t) for t in raw]
    if not any(turns):
        raise UserError(f"response {response['id']} (context {response['context_key']!r}) has no context turns")
    return turns


def _questions_create(*, dataset: Dataset, groups: list[_ContextGroup], include_reference: bool) -> None:
    """Contexts, turns, questions and candidates in a few bulk queries; responses get their candidate;
    every question becomes an open unit of work."""
    contexts = Context.objects.bulk_create(
        [Context(dataset=dataset, source=g.key[:255], source_line=i) for i, g in enumerate(groups, start=1)]
    )
    Turn.objects.bulk_create(
        [
            Turn(context=ctx, position=i, text=text, text_hash=text_hash(text))
            for ctx, g in zip(contexts, groups, strict=True)
            for i, text in enumerate(g.turns)
        ]
    )
    questions = Question.objects.bulk_create(
        [
            Question(dataset=dataset, context=ctx, ground_truth=g.reference)
            for ctx, g in zip(contexts, groups, strict=True)
        ]
    )
    candidates: list[Candidate] = []
    owners: list[list[int]] = []  # per candidate: the responses it stands for
    for question, group in zip(questions, groups, strict=True):
        by_hash: dict[str, int] = {}  # text hash -> index in candidates (one text per question)
        if include_reference and group.reference:
            by_hash[text_hash(group.reference)] = len(candidates)
            candidates.append(
                Candidate(
                    question=question,
                    text=group.reference,
                    text_hash=text_hash(group.reference),
                    is_ground_truth=True,
                    source=CandidateSource.IMPORTED,
                )
            )
            owners.append([])
        for response in group.responses:
            text = clean_text(response["text"])
            digest = text_hash(text)
            if digest not in by_hash:
                by_hash[digest] = len(candidates)
                candidates.append(
                    Candidate(question=question, text=text, text_hash=digest, source=CandidateSource.SYSTEM_RESPONSE)
                )
                owners.append([])
            owners[by_hash[digest]].append(response["id"])
    Candidate.objects.bulk_create(candidates)
    GeneratedResponse.objects.bulk_update(
        [
            GeneratedResponse(pk=response_id, candidate_id=candidate.pk)
            for candidate, response_ids in zip(candidates, owners, strict=True)
            for response_id in response_ids
        ],
        ["candidate"],
        batch_size=1000,
    )
    # What annotation_open would make of a fresh dataset, without its per-question refresh: nothing is
    # scored yet and nothing stops early, so every question is open and needs every slot.
    QuestionWork.objects.bulk_create(
        [QuestionWork(question=q, dataset=dataset, slots_needed=dataset.annotators_per_item) for q in questions]
    )
