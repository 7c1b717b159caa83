"""Human ratings of generated responses (Zhao et al., ACL 2020), DSTC10 track 5 format.

The file (``dailydialog-zhao_eval.json`` in the DSTC10 track 5 dev set) is one JSON list of objects::

    {"dialogue_id": "dailydialog-zhao_00000", "model": "S2S greedy_temp1.0_k0_p0.0",
     "context": "turn 1\\nturn 2\\nturn 3", "response": "...", "reference": ["..."],
     "annotations": {"appropriateness": [5, 4, 4, 3], "content": [...], ...}}

``context`` turns are newline-separated; every response carries its ratings from the same number
of annotators (4 in Zhao et al.), and position ``i`` of a rating list is taken to be annotator ``i``
(the split-half bound splits on these positions). Besides the generation systems, the file rates
the ground truth (``model == "ground-truth"``) and a random utterance (``"negative-sample"``):
:data:`NON_SYSTEMS`, which rankings of generation systems leave out.

The reader streams the list one object at a time (never the whole file in memory) and names the
file, the item and the field in every error. Items are read as strictly as JSON lines are
(core.json_lines.json_raw_decode): no repeated keys, NaN or over-deep nesting, and no NUL character or
lone surrogate in any string.
"""

from __future__ import annotations

import codecs
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.json_lines import JSONValueError, json_raw_decode

NON_SYSTEMS = frozenset({"ground-truth", "negative-sample"})
ASPECTS = ("appropriateness", "content", "grammar", "relevance")
_CHUNK = 1 << 16


class HumanRatingsError(ValueError):
    """The ratings file is not what the reader expects; the message names the file and the field."""


@dataclass(frozen=True)
class RatedResponse:
    dialogue_id: str
    system: str
    context: tuple[str, ...]
    response: str
    references: tuple[str, ...]
    ratings: tuple[int, ...]  # one per annotator, for the aspect that was read

    @property
    def mean_rating(self) -> float:
        return sum(self.ratings) / len(self.ratings)


def _stream_json_list(path: Path) -> Iterator[tuple[int, object]]:
    """Yield ``(index, item)`` for each element of a top-level JSON list, reading in chunks."""
    with open(path, "rb") as raw:
        if raw.read(4).startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)):
            raise HumanRatingsError(f"{path}: the file is UTF-16 or UTF-32; convert it to UTF-8")
    yield from _stream_items(path)


def _stream_items(path: Path) -> Iterator[tuple[int, object]]:
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    with open(path, "rb") as fh:
        buffer, pos, eof, lines_read = "", 0, False, 0

        def more() -> bool:
            nonlocal buffer, pos, eof, lines_read
            data = fh.read(_CHUNK)
            try:
                chunk = decoder.decode(data, final=not data)
            except UnicodeDecodeError as error:
                line = lines_read + data[: error.start].count(b"\n") + 1
                bad = error.object[error.start : error.start + 8]
                raise HumanRatingsError(f"{path}: not UTF-8 text at line {line} (undecodable bytes {bad!r})") from None
            lines_read += data.count(b"\n")
            if not data:
                eof = True
                return False
            buffer = buffer[pos:] + chunk
            pos = 0
            return True

        def skip_ws() -> str | None:
            nonlocal pos
            while True:
                while pos < len(buffer) and buffer[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buffer):
                    return buffer[pos]
                if not more():
                    return None

        first = skip_ws()
        if first != "[":
            raise HumanRatingsError(f"{path}: expected a JSON list of rated responses, found {first!r} at the start")
        pos += 1
        index = 0
        while True:
            char = skip_ws()
            if char is None:
                raise HumanRatingsError(f"{path}: the JSON list ends early (after item {index - 1}), file truncated?")
            if char == "]":
                return
            if index > 0:
                if char != ",":
                    raise HumanRatingsError(f"{path}: expected ',' or ']' after item {index - 1}, found {char!r}")
                pos += 1
                skip_ws()
            while True:
                try:
                    item, end = json_raw_decode(buffer, pos)
                    break
                except json.JSONDecodeError as error:
                    if eof or not more():
                        raise HumanRatingsError(f"{path}: item {index} is not valid JSON ({error.msg})") from error
                except JSONValueError as error:
                    field = f": field {error.field!r}" if error.field else ""
                    raise HumanRatingsError(f"{path}: item {index}{field} {error.message}") from None
            pos = end
            yield index, item
            index += 1


def _field(path: Path, index: int, item: Mapping, name: str, kind: type | tuple[type, ...]):
    ident = item.get("dialogue_id", "?") if isinstance(item, Mapping) else "?"
    where = f"{path}: item {index} (dialogue_id {ident!r})"
    if name not in item:
        raise HumanRatingsError(f"{where}: field {name!r} is missing")
    value = item[name]
    if not isinstance(value, kind):
        wanted = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise HumanRatingsError(f"{where}: field {name!r} should be {wanted}, found {type(value).__name__}")
    return value


def _numbers(value) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    )


def _read_items(path: Path, aspect: str) -> Iterator[tuple[int, str, RatedResponse, dict]]:
    """``(index, where, rated response, the item's annotations)`` for each item, checked as read_zhao says."""
    if not path.is_file():
        raise HumanRatingsError(f"{path}: no such file")
    n_annotators = None
    for index, item in _stream_json_list(path):
        if not isinstance(item, dict):
            raise HumanRatingsError(f"{path}: item {index} should be an object, found {type(item).__name__}")
        where = f"{path}: item {index} (dialogue_id {item.get('dialogue_id', '?')!r})"
        dialogue_id = _field(path, index, item, "dialogue_id", str)
        system = _field(path, index, item, "model", str)
        context = _field(path, index, item, "context", str)
        response = _field(path, index, item, "response", str)
        references = _field(path, index, item, "reference", (list, str))
        if isinstance(references, str):
            references = [references]
        if not references or not all(isinstance(r, str) for r in references):
            raise HumanRatingsError(f"{where}: field 'reference' should be a non-empty list of strings")
        annotations = _field(path, index, item, "annotations", dict)
        if aspect not in annotations:
            raise HumanRatingsError(f"{where}: field 'annotations.{aspect}' is missing")
        ratings = annotations[aspect]
        if not _numbers(ratings):
            raise HumanRatingsError(f"{where}: field 'annotations.{aspect}' should be a non-empty list of numbers")
        if n_annotators is None:
            n_annotators = len(ratings)
        elif len(ratings) != n_annotators:
            raise HumanRatingsError(
                f"{where}: field 'annotations.{aspect}' has {len(ratings)} ratings, earlier items have {n_annotators}"
            )
        rated = RatedResponse(
            dialogue_id=dialogue_id,
            system=system,
            context=tuple(context.split("\n")),
            response=response,
            references=tuple(references),
            ratings=tuple(ratings),
        )
        yield index, where, rated, annotations


def read_zhao(path: str | Path, aspect: str = "appropriateness") -> Iterator[RatedResponse]:
    """Stream the rated responses of a DSTC10-format file, keeping the ratings of ``aspect``."""
    for _, _, rated, _ in _read_items(Path(path), aspect):
        yield rated


@dataclass(frozen=True)
class AnnotatedResponse:
    """A rated response with the ratings of every aspect of its item (for the database import)."""

    index: int  # position of the item in the file's list
    where: str  # "file: item N (dialogue_id '...')", for error messages
    response: RatedResponse  # ratings of the main aspect
    aspects: tuple[tuple[str, tuple[float, ...]], ...]  # (aspect, ratings) in the file's order


def read_zhao_annotated(path: str | Path, aspect: str = "appropriateness") -> Iterator[AnnotatedResponse]:
    """Like :func:`read_zhao`, with every aspect's ratings; each must be a non-empty list of numbers
    (``aspect`` is required in every item, the others may vary)."""
    for index, where, rated, item_annotations in _read_items(Path(path), aspect):
        aspects = []
        for name, ratings in item_annotations.items():
            if not _numbers(ratings):
                raise HumanRatingsError(f"{where}: field 'annotations.{name}' should be a non-empty list of numbers")
            aspects.append((str(name), tuple(ratings)))
        yield AnnotatedResponse(index=index, where=where, response=rated, aspects=tuple(aspects))


def generation_systems(responses: Iterable[RatedResponse]) -> Iterator[RatedResponse]:
    """Leave out the ground truth and the negative sample: only the generation systems remain."""
    return (r for r in responses if r.system not in NON_SYSTEMS)


def ratings_by_system(responses: Iterable[RatedResponse]) -> dict[str, list[tuple[int, ...]]]:
    """``{system: [ratings of response 1, ratings of response 2, ...]}`` (annotator order kept)."""
    grouped: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for response in responses:
        grouped[response.system].append(response.ratings)
    return dict(grouped)


def system_human_scores(ratings: Mapping[str, Sequence[Sequence[float]]]) -> dict[str, float]:
    """System human score: the mean over its responses of the mean annotator rating."""
    scores = {}
    for system, per_response in ratings.items():
        if not per_response:
            raise ValueError(f"system {system!r} has no rated responses")
        scores[system] = sum(sum(r) / len(r) for r in per_response) / len(per_response)
    return scores
