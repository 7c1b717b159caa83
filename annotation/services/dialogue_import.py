"""import_dialogues: DailyDialog's original release format, or JSONL of context + response."""

from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.job_params import DIALOGUE_FORMATS
from core.errors import ImportFileError, UserError
from core.json_lines import JSONSyntaxError, parse_json_line
from core.lines import LineReader, RawLine, decode_field, encoding_check
from core.normalisers import DEFAULT_NORMALISER, normaliser_get, normaliser_report
from core.services.jobs import JobProgress

from .datasets import dataset_get_or_create, dataset_normaliser_set
from .questions import QuestionRecord, check_text, questions_bulk_create, record_normalise, source_ensure_new

FORMATS = DIALOGUE_FORMATS
_EOU = b"__eou__"


def dialogues_import(
    *,
    path: Path,
    fmt: str,
    dataset_name: str,
    context_turns: int = 3,
    max_dialogues: int | None = None,
    encoding: str = "utf-8",
    normaliser: str = DEFAULT_NORMALISER,
    progress: JobProgress | None = None,
) -> dict:
    """Import one question per dialogue: ``context_turns`` turns of context and the next turn as
    ground truth (DailyDialog: the first turns of each dialogue, as in Sato et al.). With
    ``max_dialogues``, the first that many dialogues that make a question; the file is read no
    further (a sample of a large file). ``normaliser`` (core.normalisers) rewrites every turn's
    style; the dataset records it, and refuses another one once it holds questions.

    One transaction: on any error nothing is imported.
    """
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if context_turns < 1:
        raise UserError("--context-turns must be at least 1")
    if max_dialogues is not None and (isinstance(max_dialogues, bool) or max_dialogues < 1):
        raise UserError("--max-dialogues must be at least 1 (or left out: all of them)")
    encoding_check(encoding=encoding)
    chosen = normaliser_get(normaliser)
    path = Path(path)
    reader = LineReader(path, max_bytes=settings.WELLCHOSEN_MAX_UTTERANCE_CHARS * 4 * 64)
    parse = _parse_dailydialog if fmt == "dailydialog" else _parse_jsonl
    report = {
        "format": fmt,
        "dataset": dataset_name,
        "lines": 0,
        "questions": 0,
        "skipped_blank": 0,
        "skipped_short": 0,
        "skipped_truncated_last_line": 0,
    }
    normalised = {"texts_seen": 0, "texts_changed": 0}
    batch_size = settings.WELLCHOSEN_IMPORT_BATCH_SIZE
    with transaction.atomic():
        dataset = dataset_get_or_create(name=dataset_name, context_turns=context_turns)
        source_ensure_new(dataset=dataset, source=path.name)
        dataset_normaliser_set(dataset=dataset, normaliser=chosen)
        batch: list[QuestionRecord] = []
        for line in reader:
            report["lines"] += 1
            if line.too_long:
                raise ImportFileError(path, line.number, None, "line is too long to be a dialogue")
            if not line.data.strip():
                report["skipped_blank"] += 1
                continue
            record = parse(line, path=path, context_turns=context_turns, encoding=encoding, report=report)
            if record is not None:
                batch.append(record_normalise(record, normaliser=chosen, path=path, counts=normalised))
            if max_dialogues is not None and report["questions"] + len(batch) >= max_dialogues:
                report["stopped_at_max_dialogues"] = max_dialogues
                break
            if len(batch) >= batch_size:
                report["questions"] += len(
                    questions_bulk_create(dataset=dataset, source=path.name, path=path, records=batch)
                )
                batch = []
            if progress:
                reader.report(progress)
        if batch:
            report["questions"] += len(
                questions_bulk_create(dataset=dataset, source=path.name, path=path, records=batch)
            )
        if progress:
            reader.report(progress, force=True)
        if report["questions"] == 0:
            raise UserError(f"{path.name}: no dialogue had {context_turns + 1} or more turns; nothing was imported")
    report.update(normaliser_report(chosen, seen=normalised["texts_seen"], changed=normalised["texts_changed"]))
    return report


def _parse_dailydialog(
    line: RawLine, *, path, context_turns: int, encoding: str, report: dict
) -> QuestionRecord | None:
    pieces = line.data.split(_EOU)
    trailing = pieces.pop().strip()
    if trailing:
        if not line.terminated:
            # Every DailyDialog line ends with __eou__: this one was cut off.
            report["skipped_truncated_last_line"] += 1
            return None
        raise ImportFileError(
            path,
            line.number,
            f"turn {len(pieces) + 1}",
            "text after the last __eou__ (is this the DailyDialog format?)",
        )
    turns = []
    for i, piece in enumerate(pieces, start=1):
        turns.append(
            check_text(
                decode_field(piece, path=path, line=line.number, field=f"turn {i}", encoding=encoding),
                path=path,
                line=line.number,
                field_name=f"turn {i}",
            )
        )
    if len(turns) < context_turns + 1:
        report["skipped_short"] += 1
        return None
    return QuestionRecord(
        line=line.number,
        context=turns[:context_turns],
        ground_truth=turns[context_turns],
        speakers=["A" if i % 2 == 0 else "B" for i in range(context_turns)],
    )


def _parse_jsonl(line: RawLine, *, path, context_turns: int, encoding: str, report: dict) -> QuestionRecord | None:
    try:
        obj = parse_json_line(line.data, path=path, line=line.number, encoding=encoding)
    except JSONSyntaxError:
        if not line.terminated:
            report["skipped_truncated_last_line"] += 1
            return None
        raise
    if not isinstance(obj, dict):
        raise ImportFileError(path, line.number, None, 'expected a JSON object {"context": [...], "response": "..."}')
    context = obj.get("context")
    if not isinstance(context, list) or not context:
        raise ImportFileError(path, line.number, "context", "must be a non-empty list of strings")
    texts = []
    for i, turn in enumerate(context):
        if not isinstance(turn, str):
            raise ImportFileError(path, line.number, f"context[{i}]", f"must be a string, not {type(turn).__name__}")
        texts.append(check_text(turn, path=path, line=line.number, field_name=f"context[{i}]"))
    response = obj.get("response")
    if not isinstance(response, str):
        raise ImportFileError(path, line.number, "response", "must be a string")
    response = check_text(response, path=path, line=line.number, field_name="response")
    speakers = obj.get("speakers")
    if speakers is not None:
        if (
            not isinstance(speakers, list)
            or len(speakers) != len(context)
            or not all(isinstance(s, str) for s in speakers)
        ):
            raise ImportFileError(path, line.number, "speakers", "must be a list of strings, one per context turn")
        speakers = [s.strip()[:100] for s in speakers]
    # The turns nearest the response are the context; older ones are dropped.
    keep = len(texts) - min(len(texts), context_turns)
    return QuestionRecord(
        line=line.number, context=texts[keep:], ground_truth=response, speakers=speakers[keep:] if speakers else None
    )
