"""Importing human ratings of generated responses: the Zhao et al. (2020) file (DSTC10 track 5 format).

Each ``model`` of the file becomes an EXTERNAL :class:`System` (known by its responses only) with one
imported :class:`Generation` (no dataset; ``source_file`` = the file's resolved path), one
:class:`GeneratedResponse` per item (``context_key`` = the item's ``dialogue_id``) and one
:class:`ResponseRating` per aspect and annotator position (``annotator_key`` "0", "1", ...).

One transaction: a bad item (named by file, item and field) leaves nothing behind. Re-importing the
same file changes nothing; an item that disagrees with what an earlier import stored (another
response text, another rating) is an error, never an overwrite (as annotation score imports do).
The file is streamed and written in batches (a few queries per batch, none per row).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from core.errors import UserError
from core.names import slug_check
from core.services.jobs import JobProgress
from evaluation.human import NON_SYSTEMS, AnnotatedResponse, HumanRatingsError, read_zhao_annotated
from evaluation.models import (
    Campaign,
    DecodingStrategy,
    EvaluationStatus,
    GeneratedResponse,
    Generation,
    ResponseRating,
    System,
    SystemKind,
)
from evaluation.scoring.backends import backend_for

_BATCH = 400  # items per batch: a few hundred query parameters, under SQLite's limit


def external_system_name(model: str) -> str:
    """A slug for a file's model string: readable, and unique and stable through a hash of the string.

    ``"GPT2_small top_temp1.0_k0_p0.9"`` -> ``"gpt2_small-top_temp1-0_k0_p0-9-<6 hex>"``. The hash keeps
    apart strings that slugify alike (case, punctuation) whatever else the file holds.
    """
    base = slugify(model.replace(".", "-"))[:80].strip("-_") or "system"
    return f"{base}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:6]}"


def zhao_ratings_import(
    *,
    path: str | Path,
    campaign_name: str | None = None,
    aspect: str = "appropriateness",
    progress: JobProgress | None = None,
) -> dict:
    """Import a Zhao et al. ratings file; with ``campaign_name``, put its generation systems in that campaign.

    ``aspect`` must be rated in every item (it is the campaign's human score when the campaign is
    created here); every aspect of an item is imported. Returns counts (see the module docstring).
    """
    path = Path(path).expanduser().resolve()
    if campaign_name is not None:
        slug_check(name=campaign_name, what="campaign")
    report = {
        "file": str(path),
        "items": 0,
        "responses_created": 0,
        "ratings": 0,
        "ratings_created": 0,
        "systems": 0,
        "systems_created": 0,
        "campaign": campaign_name,
    }
    generations: dict[str, Generation] = {}  # model string -> its generation
    seen: set[tuple[str, str]] = set()
    with transaction.atomic():
        batch: list[tuple[Generation, AnnotatedResponse]] = []
        try:
            for annotated in read_zhao_annotated(path, aspect):
                rated = annotated.response
                if (rated.system, rated.dialogue_id) in seen:
                    raise UserError(
                        f"{annotated.where}: field 'dialogue_id' repeats an earlier item of model {rated.system!r}"
                    )
                seen.add((rated.system, rated.dialogue_id))
                _check_values(annotated)
                if rated.system not in generations:
                    generations[rated.system] = _imported_generation(rated.system, path, annotated.where, report)
                batch.append((generations[rated.system], annotated))
                if len(batch) >= _BATCH:
                    _write(batch, report)
                    batch = []
                    if progress:
                        progress.update(done=report["items"], total=0, phase="reading ratings", unit="items")
            _write(batch, report)
        except HumanRatingsError as error:
            raise UserError(str(error)) from None
        if not generations:
            raise UserError(f"{path}: the file holds no rated responses")
        report["systems"] = len(generations)
        if campaign_name is not None:
            campaign, created = Campaign.objects.get_or_create(
                name=campaign_name, defaults={"human_aspect": aspect, "description": f"Imported from {path.name}"}
            )
            ranked = [g for model, g in generations.items() if model not in NON_SYSTEMS]
            campaign.generations.add(*ranked)
            campaign.systems.add(*[g.system_id for g in ranked])
            report["campaign_created"] = created
            report["campaign_generations"] = len(ranked)
    return report


def _check_values(annotated: AnnotatedResponse) -> None:
    for aspect, ratings in annotated.aspects:
        bad = [v for v in ratings if not 1 <= v <= 5]
        if bad:
            raise UserError(f"{annotated.where}: field 'annotations.{aspect}' holds {bad[0]!r}; ratings are 1 to 5")


def _imported_generation(model: str, path: Path, where: str, report: dict) -> Generation:
    name = external_system_name(model)
    system = System.objects.filter(name=name).first()
    if system is None:
        system = System.objects.create(name=name, kind=SystemKind.EXTERNAL, description=model)
        report["systems_created"] += 1
    elif backend_for(system).scores:  # a system with a model of ours: its responses are never imported
        raise UserError(
            f"{where}: field 'model': {model!r} is imported as system {name!r}, "
            f"but a {system.kind} system has that name"
        )
    generation, _ = Generation.objects.get_or_create(
        system=system,
        dataset=None,
        source_file=str(path),
        defaults={
            "strategy": DecodingStrategy.IMPORTED,
            "status": EvaluationStatus.SUCCEEDED,
            "finished_at": timezone.now(),
        },
    )
    return generation


def _write(batch: list[tuple[Generation, AnnotatedResponse]], report: dict) -> None:
    if not batch:
        return
    report["items"] += len(batch)
    generation_ids = {g.pk for g, _ in batch}
    keys = [a.response.dialogue_id for _, a in batch]

    def stored() -> dict[tuple[int, str], dict]:
        return {
            (row["generation_id"], row["context_key"]): row
            for row in GeneratedResponse.objects.filter(generation_id__in=generation_ids, context_key__in=keys).values(
                "id", "generation_id", "context_key", "text", "context", "references"
            )
        }

    existing = stored()
    new_responses = []
    for generation, annotated in batch:
        rated = annotated.response
        row = existing.get((generation.pk, rated.dialogue_id))
        if row is None:
            new_responses.append(
                GeneratedResponse(
                    generation=generation,
                    context_key=rated.dialogue_id,
                    context=list(rated.context),
                    references=list(rated.references),
                    text=rated.response,
                )
            )
            continue
        for field, old, new in (
            ("response", row["text"], rated.response),
            ("context", row["context"], list(rated.context)),
            ("reference", row["references"], list(rated.references)),
        ):
            if old != new:
                raise UserError(
                    f"{annotated.where}: field {field!r} differs from the one imported before for model "
                    f"{rated.system!r}; imported responses are never overwritten"
                )
    GeneratedResponse.objects.bulk_create(new_responses)
    report["responses_created"] += len(new_responses)
    needed = {(g.pk, a.response.dialogue_id) for g, a in batch}
    ids = {key: row["id"] for key, row in stored().items() if key in needed}

    ratings = {
        (response_id, aspect, annotator): value
        for response_id, aspect, annotator, value in ResponseRating.objects.filter(
            response_id__in=ids.values()
        ).values_list("response_id", "aspect", "annotator_key", "value")
    }
    new_ratings = []
    for generation, annotated in batch:
        response_id = ids[(generation.pk, annotated.response.dialogue_id)]
        for aspect, values in annotated.aspects:
            for position, value in enumerate(values):
                key = (response_id, aspect, str(position))
                report["ratings"] += 1
                if key not in ratings:
                    new_ratings.append(
                        ResponseRating(response_id=response_id, aspect=aspect, annotator_key=key[2], value=value)
                    )
                elif ratings[key] != value:
                    raise UserError(
                        f"{annotated.where}: field 'annotations.{aspect}' gives annotator {position} the rating "
                        f"{value!r}, imported before as {ratings[key]!r}; ratings are never overwritten"
                    )
    ResponseRating.objects.bulk_create(new_ratings)
    report["ratings_created"] += len(new_ratings)
