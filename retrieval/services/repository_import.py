"""import_repository: stream an utterance repository into the database in bounded memory.

Formats: ``lines`` (one utterance per line, OpenSubtitles raw style, .gz too),
``cornell`` (Cornell Movie-Dialogs movie_lines.txt, `` +++$+++ ``-separated fields) and
``dailydialog`` (every turn of DailyDialog's ``__eou__``-separated dialogues).

Utterances are de-duplicated by normalised text within the repository (the database's
unique constraint does it, so memory does not grow with the file). Importing into an
existing repository adds to it (a file of utterances it already holds adds nothing). The whole
import is one transaction; a file in which no utterance passes the filters (empty, or every line
skipped) is an error that creates nothing.

For speed at millions of lines the file is read in blocks (LineReader.blocks); a block of ``lines``
is cleaned, counted and hashed at once by core.text_batch, which takes most lines, and the rest
(other non-ASCII text, formatting tags, bad bytes) go one by one through core.text and the error
rules of core.lines, as every line of the other formats does. A style normaliser (``--normalise``,
core.normalisers) is applied to every text after that; where it changes one, its word count and
hash are taken anew and the original is kept beside it. Batches go to the database through
one writer per database path (import_writers).
"""

import codecs
from collections.abc import Callable, Iterator
from functools import partial
from itertools import count
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F

from annotation.models import Repository, Utterance
from core.errors import ImportFileError, UserError
from core.forked import fork_available, forked_items
from core.lines import LineBlock, LineReader, RawLine, decode_field, encoding_check
from core.names import slug_check
from core.normalisers import DEFAULT_NORMALISER, TextNormaliser, normaliser_get, normaliser_mix_check, normaliser_report
from core.services.jobs import JobProgress
from core.text import clean_text, count_tokens, strip_formatting_tags, text_hash
from core.text_batch import clean_texts_tokens_and_hashes
from retrieval.job_params import REPOSITORY_FORMATS
from retrieval.services.exclusions import excluded_hashes
from retrieval.services.import_writers import utterance_writer

FORMATS = REPOSITORY_FORMATS
_CORNELL_SEP = b" +++$+++ "
_EOU = b"__eou__"
_ASCII_TRANSPARENT = {"utf-8", "utf-8-sig", "ascii", "iso8859-1", "iso8859-15", "cp1252"}


def repository_name_check(*, name: str) -> str:
    return slug_check(name=name, what="repository")


def repository_import(
    *,
    path: Path,
    name: str,
    fmt: str = "lines",
    min_tokens: int = 1,
    exclude_datasets: list[str] | None = None,
    encoding: str = "utf-8",
    use_copy: bool | None = None,
    normaliser: str = DEFAULT_NORMALISER,
    progress: JobProgress | None = None,
) -> dict:
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    repository_name_check(name=name)
    encoding_check(encoding=encoding)
    chosen = normaliser_get(normaliser)
    path = Path(path)
    max_chars = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS
    # DailyDialog lines hold whole dialogues; other formats one utterance (plus Cornell's ids).
    reader = LineReader(path, max_bytes=max_chars * 4 * (64 if fmt == "dailydialog" else 1) + 256)
    with transaction.atomic():
        repository, _ = Repository.objects.get_or_create(name=name)
        repository_normaliser_set(repository=repository, normaliser=chosen)
        excluded = excluded_hashes(exclude_datasets or [])
        with utterance_writer(repository=repository, source=path.name[:255], use_copy=use_copy) as writer:
            options = {
                "fmt": fmt,
                "encoding": encoding,
                "min_tokens": min_tokens,
                "excluded": excluded,
                "normaliser": chosen,
            }
            parse = partial(_parse, path, max_bytes=reader.max_bytes, encode=writer.encode, **options)
            # a large file is read and normalised in a child process while this one writes
            in_child = reader.size >= settings.WELLCHOSEN_IMPORT_PARSE_PROCESS_MB << 20 and fork_available()
            for kind, *values in forked_items(partial(_send_all, parse)) if in_child else parse():
                if kind == "rows":
                    writer.write(values[0])
                elif kind == "read":
                    reader.follow(lines_read=values[0], position=values[1], finished=values[2])
                    if progress:
                        reader.report(progress, force=values[2])
                else:
                    report = values[0]
            report["inserted"] = writer.close()
        if report["kept"] == 0:
            raise UserError(f"{path.name}: no utterance to import ({_skips(report)}); nothing was imported")
        if report["inserted"]:
            # search indexes built before this import are now stale
            Repository.objects.filter(pk=repository.pk).update(content_version=F("content_version") + 1)
    return {
        "repository": name,
        "format": fmt,
        "lines": report["lines"],
        "utterances_read": report["utterances_read"],
        "inserted": report["inserted"],
        # kept: utterances that passed every filter, inserted now or already in the repository
        "duplicates": report["kept"] - report["inserted"],
        **{key: report[key] for key in _SKIPPED},
        "repository_size": Utterance.objects.filter(repository=repository).count(),
        **normaliser_report(chosen, seen=report["texts_seen"], changed=report["texts_changed"]),
    }


def repository_normaliser_check(*, name: str, normaliser: str) -> None:
    """Whether an import into repository ``name`` (new or existing) may apply ``normaliser``: a
    UserError when it holds utterances imported with another (the import form asks before the job)."""
    chosen = normaliser_get(normaliser)
    repository = Repository.objects.filter(name=name).first()
    if repository is not None:
        _normaliser_mix_check(repository=repository, normaliser=chosen)


def _normaliser_mix_check(*, repository: Repository, normaliser: TextNormaliser) -> None:
    normaliser_mix_check(
        what=f"repository {repository.name!r}",
        recorded=(repository.text_normaliser, repository.text_normaliser_version),
        normaliser=normaliser,
        holds_texts=Utterance.objects.filter(repository=repository).exists(),
    )


def repository_normaliser_set(*, repository: Repository, normaliser: TextNormaliser) -> None:
    """Record the normaliser an import into ``repository`` applies; refused when the repository
    holds utterances imported with another one (or another version of it)."""
    _normaliser_mix_check(repository=repository, normaliser=normaliser)
    if (repository.text_normaliser, repository.text_normaliser_version) != (normaliser.name, normaliser.version):
        repository.text_normaliser, repository.text_normaliser_version = normaliser.name, normaliser.version
        repository.save(update_fields=["text_normaliser", "text_normaliser_version"])


def _parse(path: Path, *, max_bytes: int, encode: Callable[[list[tuple]], object], **options) -> Iterator[tuple]:
    """The import's reading side, in this process or a forked one (forked_items): ``("rows",
    batch)`` for each batch of new texts (as the writer's ``encode`` makes it for its database),
    ``("read", lines, position, finished)`` after each block (for the parent's LineReader.follow)
    and at the end ``("counts", counts)``."""
    reader = LineReader(path, max_bytes=max_bytes)
    batches = _Batches(path=path, **options)
    for block in reader.blocks():
        batches.add(block)
        for batch in batches.ready:
            yield "rows", encode(batch)
        batches.ready.clear()
        yield "read", reader.lines_read, reader.position(), False
    if batches.batch:
        yield "rows", encode(list(batches.batch.values()))
    yield "read", reader.lines_read, reader.position(), True
    yield "counts", {**batches.counts, "lines": reader.lines_read}


def _send_all(parse: Callable[[], Iterator[tuple]], send: Callable[[tuple], None]) -> None:
    for event in parse():
        send(event)


class _Batches:
    """The filters and counts of one import, and its batches of new texts (one row per text; the
    first line that has it), ``ready`` for the writer once full."""

    def __init__(
        self, *, path: Path, fmt: str, encoding: str, min_tokens: int, excluded: set[str], normaliser: TextNormaliser
    ) -> None:
        self.path, self.fmt, self.encoding, self.min_tokens, self.excluded = path, fmt, encoding, min_tokens, excluded
        self.normaliser = normaliser if normaliser.changes_text else None
        self.max_chars = settings.WELLCHOSEN_MAX_UTTERANCE_CHARS
        self.batch_size = settings.WELLCHOSEN_IMPORT_BATCH_SIZE
        # core.text_batch reads lines undecoded: ASCII bytes must be ASCII text in the encoding
        codec = codecs.lookup(encoding).name
        self.batch_lines, self.utf8 = codec in _ASCII_TRANSPARENT, codec == "utf-8"
        self.counts = dict.fromkeys(["lines", "utterances_read", "kept", *_SKIPPED, "texts_seen", "texts_changed"], 0)
        self.batch: dict[str, tuple] = {}
        self.ready: list[list[tuple]] = []

    def add(self, block: LineBlock) -> None:
        lines = block.lines
        if not block.terminated and block.start + len(lines) > 2 and lines[-1] is not None:
            # A multi-line file whose last line lacks its newline was cut off (a partial
            # download): the utterance on it may be cut mid-sentence, so it is not kept.
            self.counts["skipped_unterminated_last_line"] += 1
            lines = lines[:-1]
        if self.fmt == "lines":
            self._add_lines(lines, block.start)
            return
        for number, data in enumerate(lines, start=block.start):
            if data is None:
                self.counts["skipped_too_long"] += 1
                continue
            line = RawLine(number=number, data=data, terminated=True, too_long=False)
            for text, source_ref in _utterances(line, fmt=self.fmt, path=self.path, encoding=self.encoding):
                self._add_text(text, number, source_ref)

    def _add_lines(self, lines: list, start: int) -> None:
        """One utterance a line: most lines at once (core.text_batch), the others one by one."""
        if self.batch_lines:
            texts, tokens, hashes = clean_texts_tokens_and_hashes(lines, utf8=self.utf8)
        else:
            texts = tokens = hashes = [None] * len(lines)
        originals = self._normalised(texts, tokens, hashes) if self.normaliser else None
        counts, batch, excluded = self.counts, self.batch, self.excluded
        max_chars, min_tokens = self.max_chars, self.min_tokens
        for i, (number, data, text, n_tokens, digest) in enumerate(zip(count(start), lines, texts, tokens, hashes)):
            if text is None:
                if data is None:
                    counts["skipped_too_long"] += 1
                else:
                    text = decode_field(data, path=self.path, line=number, field="text", encoding=self.encoding)
                    self._add_text(text, number, "")
                continue
            counts["utterances_read"] += 1
            if not text:
                counts["skipped_blank"] += 1
            elif len(text) > max_chars:
                counts["skipped_too_long"] += 1
            elif n_tokens < min_tokens:
                counts["skipped_short"] += 1
            elif digest in excluded:
                counts["skipped_excluded"] += 1
            else:
                counts["kept"] += 1
                if digest not in batch:
                    batch[digest] = (text, digest, min(n_tokens, 32767), number, "", originals[i] if originals else "")
                    if len(batch) >= self.batch_size:
                        self._flush()

    def _normalised(self, texts: list, tokens: list, hashes: list) -> list[str]:
        """Normalise the texts of a block that core.text_batch took, in place; the changed ones get
        their word counts and hashes anew, set-wise again (core.text_batch, one by one where it
        leaves one). The originals of the changed ones ("" for the others)."""
        normalise, originals = self.normaliser.normalise, [""] * len(texts)
        changed: list[int] = []
        for i, text in enumerate(texts):
            if not text:
                continue
            self.counts["texts_seen"] += 1
            result = clean_text(normalise(text))
            if result != text:
                changed.append(i)
                originals[i], texts[i] = text, result
        self.counts["texts_changed"] += len(changed)
        if changed:
            _, new_tokens, new_hashes = clean_texts_tokens_and_hashes(
                [texts[i].encode("utf-8") for i in changed], utf8=True
            )
            for i, n_tokens, digest in zip(changed, new_tokens, new_hashes, strict=True):
                text = texts[i]
                if n_tokens is None:
                    n_tokens, digest = count_tokens(text), text_hash(text) if text else ""
                tokens[i], hashes[i] = n_tokens, digest
        return originals

    def _add_text(self, text: str, number: int, source_ref: str) -> None:
        counts = self.counts
        counts["utterances_read"] += 1
        text = clean_text(strip_formatting_tags(text))
        original = ""
        if text and self.normaliser:
            counts["texts_seen"] += 1
            result = clean_text(self.normaliser.normalise(text))
            if result != text:
                counts["texts_changed"] += 1
                original, text = text, result
        if not text:
            counts["skipped_blank"] += 1
            return
        if len(text) > self.max_chars:
            counts["skipped_too_long"] += 1
            return
        n_tokens = count_tokens(text)
        if n_tokens < self.min_tokens:
            counts["skipped_short"] += 1
            return
        digest = text_hash(text)
        if digest in self.excluded:
            counts["skipped_excluded"] += 1
        else:
            counts["kept"] += 1
            if digest not in self.batch:
                self.batch[digest] = (text, digest, min(n_tokens, 32767), number, source_ref[:64], original)
                if len(self.batch) >= self.batch_size:
                    self._flush()

    def _flush(self) -> None:
        self.ready.append(list(self.batch.values()))
        self.batch.clear()


_SKIPPED = {
    "skipped_blank": "blank",
    "skipped_short": "under --min-tokens",
    "skipped_too_long": "too long",
    "skipped_excluded": "in an excluded dataset",
    "skipped_unterminated_last_line": "a cut-off last line",
}


def _skips(report: dict) -> str:
    return ", ".join(
        [f"{report['lines']} lines"] + [f"{report[key]} {what}" for key, what in _SKIPPED.items() if report[key]]
    )


def _utterances(line: RawLine, *, fmt: str, path: Path, encoding: str) -> Iterator[tuple[str, str]]:
    if fmt == "lines":
        yield decode_field(line.data, path=path, line=line.number, field="text", encoding=encoding), ""
    elif fmt == "cornell":
        fields = line.data.split(_CORNELL_SEP, 4)
        if len(fields) != 5:
            if not line.data.strip():
                return
            raise ImportFileError(
                path,
                line.number,
                "text",
                f"expected 5 fields separated by ' +++$+++ ' (lineID, characterID, movieID, "
                f"character, text), found {len(fields)}",
            )
        line_id = decode_field(fields[0], path=path, line=line.number, field="lineID", encoding=encoding).strip()
        yield decode_field(fields[4], path=path, line=line.number, field="text", encoding=encoding), line_id
    else:
        pieces = line.data.split(_EOU)
        if pieces[-1].strip():
            raise ImportFileError(
                path, line.number, f"turn {len(pieces)}", "text after the last __eou__ (is this DailyDialog?)"
            )
        for i, piece in enumerate(pieces[:-1], start=1):
            yield decode_field(piece, path=path, line=line.number, field=f"turn {i}", encoding=encoding), f"turn {i}"
