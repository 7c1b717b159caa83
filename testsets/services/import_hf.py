"""import_testset --format hf: a Hugging Face test set folder (as export_testset --format hf writes it)
imported as a dataset and a frozen test set, so that groups can exchange releases.

Creates what the TSV import creates (contexts, turns, questions, candidates with their sources,
scores by placeholder annotators DATASET#1..k) and freezes the release as a TestSet in the file's
question and choice order. A derived question (Sato et al. §3.2) is stored as the build stores it:
on its original's context, its choices being candidates of the original question.

The data file is read three times, each pass streamed: every line is checked (and the links
between lines) before anything is written; then original questions are created, then derived
ones. One transaction: on any error nothing is imported.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Candidate, Question
from annotation.selectors import filter_rules_stored
from annotation.selectors_agreement import candidates_agreement, dataset_agreement
from annotation.selectors_annotators import annotator_label
from annotation.services.annotators import imported_annotators_get_or_create, imported_scores_insert
from annotation.services.datasets import dataset_get_or_create
from annotation.services.questions import QuestionRecord, questions_bulk_create, source_ensure_new
from core.errors import ImportFileError, UserError
from core.services.jobs import JobProgress
from core.text import text_hash
from testsets.formats.hf import HFFormat
from testsets.formats.hf.folder_read import HFFolder, hf_folder_read, release_name, sha256_check
from testsets.formats.hf.records import HFRecord, context_digest, hf_records
from testsets.models import TestSet, TestSetCandidate, TestSetQuestion

from .build import package_version, testset_file_entries, testset_name_check
from .shortcut_audit import testset_manifest_audit


def testset_hf_import(
    *,
    folder: Path,
    dataset_name: str | None = None,
    name: str | None = None,
    progress: JobProgress | None = None,
) -> dict:
    """Import the folder's release as test set ``name`` (default: the manifest's name, else the
    folder's) in dataset ``dataset_name`` (default: the test set's name)."""
    hf = hf_folder_read(Path(folder))
    digest = sha256_check(hf)
    name = name or release_name(hf)
    dataset_name = dataset_name or name
    path = hf.data_path
    report = {
        "format": HFFormat.name,
        "testset": name,
        "dataset": dataset_name,
        "questions": 0,
        "derived_questions": 0,
        "candidates": 0,
        "scores": 0,
        "annotators_per_candidate": 0,
        "skipped_blank": 0,
        "skipped_truncated_last_line": 0,
        "sha256": digest,
        "sha256_checked": hf.expected_sha256 is not None,
    }
    with transaction.atomic():
        testset_name_check(name=name)
        index = _index(path, report=report, progress=_phase(progress, "checking the file"))
        dataset = dataset_get_or_create(name=dataset_name, context_turns=index.max_context_turns)
        if dataset.is_rating:
            raise UserError(f"dataset {dataset.name!r} rates generated responses 1-5; a test set needs one scored 0-5")
        source = f"{hf.folder.resolve().name[:200]}/{hf.data_file}"
        source_ensure_new(dataset=dataset, source=source)
        annotators = imported_annotators_get_or_create(namespace=dataset.name, count=index.n_annotators)
        rules = filter_rules_stored()
        testset = TestSet.objects.create(
            name=name,
            dataset=dataset,
            rules=rules,
            seed=0,
            false_per_question=index.n_choices - 1,
        )
        importer = _Importer(
            path=path,
            dataset=dataset,
            source=source,
            testset=testset,
            index=index,
            annotators=annotators,
            report=report,
        )
        importer.run(derived=False, progress=_phase(progress, "importing questions"))
        importer.run(derived=True, progress=_phase(progress, "importing derived questions"))
        report["annotators_per_candidate"] = index.n_annotators
        _manifest_write(testset, hf=hf, digest=digest)
    return report


def _phase(progress: JobProgress | None, phase: str):
    if progress is None:
        return None
    return lambda reader: reader.report(progress, phase=phase)


@dataclass(slots=True)
class _Seen:
    line: int
    position: int  # 1-based, in file order
    context: str  # digest of the context turns
    ground_truth: str  # text hash of choices[label]
    derived_from: str | None


@dataclass
class _Index:
    """What the first pass learned: every question_id, and the shape of the release."""

    seen: dict[str, _Seen]
    n_choices: int
    n_annotators: int
    max_context_turns: int
    referenced: set[str]  # question_ids that questions are derived from

    def position(self, record: HFRecord, *, path: Path) -> int:
        entry = self.seen.get(record.question_id)
        if entry is None or entry.line != record.line:
            raise UserError(f"{path.name} changed while it was imported; nothing was imported")
        return entry.position


def _index(path: Path, *, report: dict, progress) -> _Index:
    seen: dict[str, _Seen] = {}
    n_choices = n_annotators = max_context_turns = 0
    for record in hf_records(path, report=report, progress=progress):
        first = seen.get(record.question_id)
        if first is not None:
            raise ImportFileError(
                path, record.line, "question_id", f"{record.question_id!r:.80} is also the id of line {first.line}"
            )
        seen[record.question_id] = _Seen(
            record.line,
            len(seen) + 1,
            context_digest(record.context),
            text_hash(record.ground_truth),
            record.derived_from,
        )
        n_choices = len(record.choices)
        n_annotators = max(n_annotators, *(len(scores) for scores in record.scores))
        max_context_turns = max(max_context_turns, len(record.context))
    if not seen:
        raise UserError(f"{path.name}: no questions found; nothing was imported")
    derivations: dict[tuple[str, str], int] = {}
    for entry in seen.values():
        if entry.derived_from is not None:
            _derivation_check(entry, seen=seen, derivations=derivations, path=path)
    referenced = {e.derived_from for e in seen.values() if e.derived_from is not None}
    return _Index(seen, n_choices, n_annotators, max_context_turns, referenced)


def _derivation_check(entry: _Seen, *, seen: dict[str, _Seen], derivations: dict, path: Path) -> None:
    original = seen.get(entry.derived_from)
    name = f"{entry.derived_from!r:.80}"
    if original is None:
        raise ImportFileError(path, entry.line, "derived_from", f"{name} is no question_id of this file")
    if original.derived_from is not None:
        raise ImportFileError(
            path,
            entry.line,
            "derived_from",
            f"{name} (line {original.line}) is itself derived; a question is derived from an original one",
        )
    if original.context != entry.context:
        raise ImportFileError(
            path, entry.line, "context", f"differs from the context of {name} (line {original.line}), its original"
        )
    if original.ground_truth == entry.ground_truth:
        raise ImportFileError(
            path, entry.line, "label", f"choices[label] is the ground truth of {name} (line {original.line})"
        )
    key = (entry.derived_from, entry.ground_truth)
    if key in derivations:
        raise ImportFileError(
            path,
            entry.line,
            "derived_from",
            f"line {derivations[key]} is derived from {name} with the same ground truth already",
        )
    derivations[key] = entry.line


@dataclass(slots=True)
class _Choice:
    """A candidate of an original question that derived questions may share."""

    scores: list[int]
    candidate_id: int | None = None
    unsaved: Candidate | None = None


@dataclass(slots=True)
class _Original:
    line: int
    question_id: int
    context_id: int
    choices: dict[str, _Choice] = field(default_factory=dict)  # by text hash


class _Importer:
    def __init__(self, *, path, dataset, source, testset, index: _Index, annotators, report: dict) -> None:
        self.path, self.dataset, self.source, self.testset = path, dataset, source, testset
        self.index, self.annotators, self.report = index, annotators, report
        self.labels = [annotator_label(a) for a in annotators]
        self.originals: dict[str, _Original] = {}

    def run(self, *, derived: bool, progress) -> None:
        create = self._create_derived if derived else self._create_originals
        batch: list[HFRecord] = []
        for record in hf_records(self.path, progress=progress):
            if (record.derived_from is not None) == derived:
                batch.append(record)
            if len(batch) >= settings.WELLCHOSEN_IMPORT_BATCH_SIZE:
                create(batch)
                batch = []
        if batch:
            create(batch)

    def _create_originals(self, batch: list[HFRecord]) -> None:
        orders = [[r.label, *(i for i in range(len(r.choices)) if i != r.label)] for r in batch]
        created = questions_bulk_create(
            dataset=self.dataset,
            source=self.source,
            path=self.path,
            records=[
                QuestionRecord(
                    line=r.line,
                    context=r.context,
                    ground_truth=r.ground_truth,
                    false_candidates=[r.choices[i] for i in order[1:]],
                    speakers=["A" if i % 2 == 0 else "B" for i in range(len(r.context))],
                    sources=[r.sources[i] for i in order],
                )
                for r, order in zip(batch, orders, strict=True)
            ],
        )
        frozen = []
        for record, order, item in zip(batch, orders, created, strict=True):
            by_choice = [0] * len(order)
            for candidate_id, i in zip(item.candidate_ids, order, strict=True):
                by_choice[i] = candidate_id
            frozen.append((record, item.question_id, by_choice))
            if record.question_id in self.index.referenced:
                self.originals[record.question_id] = _Original(
                    record.line,
                    item.question_id,
                    item.context_id,
                    {
                        text_hash(text): _Choice(scores, candidate_id)
                        for text, scores, candidate_id in zip(record.choices, record.scores, by_choice, strict=True)
                    },
                )
        self._scores_create([(cids, r.scores) for r, _, cids in frozen])
        self.report["candidates"] += sum(len(cids) for _, _, cids in frozen)
        self._freeze(frozen)

    def _create_derived(self, batch: list[HFRecord]) -> None:
        """Each choice is a candidate of the original question: one it has already (the same
        scores are required), or one created for it."""
        new: list[_Choice] = []
        uses: list[tuple[HFRecord, _Original, list[_Choice]]] = []
        for record in batch:
            original = self.originals[record.derived_from]
            choices = []
            for i, (text, scores) in enumerate(zip(record.choices, record.scores, strict=True)):
                digest = text_hash(text)
                choice = original.choices.get(digest)
                if choice is None:
                    unsaved = Candidate(
                        question_id=original.question_id,
                        text=text,
                        text_hash=digest,
                        is_ground_truth=False,
                        source=record.sources[i],
                    )
                    choice = original.choices[digest] = _Choice(scores, unsaved=unsaved)
                    new.append(choice)
                elif choice.scores != scores:
                    raise ImportFileError(
                        self.path,
                        record.line,
                        f"scores[{i}]",
                        f"differ from the scores of the same choice in {record.derived_from!r:.80} "
                        f"(line {original.line}), its original",
                    )
                choices.append(choice)
            uses.append((record, original, choices))
        for choice, candidate in zip(new, Candidate.objects.bulk_create([c.unsaved for c in new]), strict=True):
            choice.candidate_id, choice.unsaved = candidate.pk, None
        self._scores_create([([c.candidate_id], [c.scores]) for c in new])
        self.report["candidates"] += len(new)
        questions = Question.objects.bulk_create(
            [
                Question(
                    dataset=self.dataset,
                    context_id=original.context_id,
                    ground_truth=record.ground_truth,
                    derived_from_id=original.question_id,
                    derived_ground_truth_id=choices[record.label].candidate_id,
                )
                for record, original, choices in uses
            ]
        )
        self.report["derived_questions"] += len(questions)
        self._freeze(
            [
                (record, question.pk, [c.candidate_id for c in choices])
                for (record, _, choices), question in zip(uses, questions, strict=True)
            ]
        )

    def _scores_create(self, rows: list[tuple[list[int], list[list[int]]]]) -> None:
        self.report["scores"] += imported_scores_insert(scored=rows, annotators=self.annotators)

    def _freeze(self, frozen: list[tuple[HFRecord, int, list[int]]]) -> None:
        """The release's questions and choices, in the file's order, with their scores as given."""
        items = TestSetQuestion.objects.bulk_create(
            [
                TestSetQuestion(
                    testset=self.testset, question_id=question_id, position=self.index.position(r, path=self.path)
                )
                for r, question_id, _ in frozen
            ]
        )
        TestSetCandidate.objects.bulk_create(
            [
                TestSetCandidate(
                    item=item,
                    candidate_id=candidate_id,
                    position=i,
                    is_ground_truth=(i == record.label),
                    scores=[[label, value] for label, value in zip(self.labels, record.scores[i], strict=False)],
                )
                for item, (record, _, candidate_ids) in zip(items, frozen, strict=True)
                for i, candidate_id in enumerate(candidate_ids)
            ]
        )
        self.report["questions"] += len(items)


def _manifest_write(testset: TestSet, *, hf: HFFolder, digest: str) -> None:
    """A manifest as the build writes one; "imported_from" says where the release came from, and
    no filter rules or seed chose it here."""
    rows = list(TestSetCandidate.objects.filter(item__testset=testset).values_list("candidate_id", "scores"))
    testset.manifest = {
        "format_version": 2,
        "name": testset.name,
        "dataset": testset.dataset.name,
        "created_at": timezone.now().isoformat(),
        "software": {"wellchosen": package_version()},
        "seed": None,
        "false_per_question": testset.false_per_question,
        "annotators_per_item": testset.dataset.annotators_per_item,
        "rules": None,
        "imported_from": {
            "format": HFFormat.name,
            "folder": hf.folder.resolve().name,
            "data_file": hf.data_file,
            "sha256": digest,
            "sha256_listed_in_manifest": hf.expected_sha256 is not None,
            "manifest_name": hf.manifest.get("name") if isinstance(hf.manifest.get("name"), str) else None,
        },
        "counts": {
            "questions": testset.items.count(),
            "derived_questions": testset.items.filter(question__derived_from__isnull=False).count(),
            "candidates": len(rows),
            "scores": sum(len(scores) for _, scores in rows),
        },
        "agreement": {
            "dataset": dataset_agreement(dataset=testset.dataset),
            "release": candidates_agreement(candidate_ids=[candidate_id for candidate_id, _ in rows]),
        },
    }
    testset.manifest["files"] = testset_file_entries(testset)
    testset.manifest["shortcut_audit"] = testset_manifest_audit(testset)
    testset.save(update_fields=["manifest"])
