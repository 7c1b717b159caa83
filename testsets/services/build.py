"""build_testset: freeze a test set of 1 ground truth + k false candidates per question (§3.2)."""

import hashlib
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version

from django.db import transaction
from django.utils import timezone

from annotation.models import Dataset
from annotation.selectors import dataset_stopping_summary, filter_rules_stored
from annotation.selectors_agreement import dataset_agreement
from annotation.selectors_dataset import candidate_verdicts_by_source
from annotation.selectors_response_counts import response_counts_materialised
from core.bulk_keys import deferred_checks_run
from core.errors import UserError
from core.forked import ForkedCall
from core.gc_pause import gc_paused
from core.imports_beside import modules_imported_beside
from core.names import slug_check
from core.services.jobs import JobProgress
from testsets.formats.registry import EXPORT_FILES, export_filename, forks_for, render_exports
from testsets.items import TestSetItem
from testsets.models import TestSet
from testsets.selectors import item_pool, testset_agreement
from testsets.shortcuts.audit import AUDIT_MODULES
from testsets.shortcuts.balance import BalanceOptions

from .rows import testset_stage
from .shortcut_audit import testset_manifest_audit


def testset_name_check(*, name: str) -> str:
    """The name of a new test set: a slug no test set has (test sets are frozen, never replaced)."""
    slug_check(name=name, what="test set")
    if TestSet.objects.filter(name=name).exists():
        raise UserError(f"a test set named {name!r} exists already; test sets are frozen, choose a new name")
    return name


@gc_paused()
def testset_build(
    *,
    dataset_name: str,
    name: str,
    false_per_question: int = 3,
    seed: int = 0,
    rules_version: int | None = None,
    balance: BalanceOptions | None = None,
    progress: JobProgress | None = None,
) -> TestSet:
    """Build and freeze a test set. Deterministic for a seed: which candidates are chosen, which
    acceptable candidates become derived ground truths, and the candidate order.

    Set-based: the filter decisions stream from one query (the preview's), the chosen questions
    and candidates go to a staging table, and the test set's rows are written from it in bulk,
    a block of questions at a time (testset_rows); memory does not grow with the dataset.

    ``balance``: choose each question's false candidates shortcut-aware (testsets.shortcuts.balance)
    among those the filter rules kept, after the rules and never instead of them; the manifest
    records the options and how many questions could not be balanced."""
    slug_check(name=name, what="test set")
    if false_per_question < 1:
        raise UserError("--false must be at least 1")
    if balance is not None and balance.rounds < 0:
        raise UserError(f"--shortcut-rounds must be 0 or more, not {balance.rounds}")
    dataset = Dataset.objects.filter(name=dataset_name).first()
    if dataset is None:
        raise UserError(f"no dataset {dataset_name!r}")
    if dataset.is_rating:
        raise UserError(
            f"dataset {dataset.name!r} rates generated responses 1-5 (to rank systems); "
            "test sets are built from datasets whose candidates were scored 0-5 for selection"
        )
    rules = filter_rules_stored(version=rules_version)
    # Every read of the dataset's responses below (prior, decisions, summaries, agreement) from
    # one aggregation of its scores. The audit's modules load in a thread meanwhile, while this
    # one waits on the server (core.imports_beside).
    with (
        modules_imported_beside(AUDIT_MODULES) as importing,
        transaction.atomic(),
        response_counts_materialised(dataset=dataset, rules=rules),
    ):
        testset_name_check(name=name)
        testset = TestSet.objects.create(
            name=name, dataset=dataset, rules=rules, seed=seed, false_per_question=false_per_question
        )
        with testset_stage() as stage:
            preview = stage.plan(
                dataset=dataset, rules=rules, false_per_question=false_per_question, seed=seed, balance=balance
            )
            if not stage.questions:
                raise UserError(
                    preview.nothing_buildable_reason()
                    or f"dataset {dataset.name!r}: no question passes the rules with {false_per_question} false "
                    "candidates"
                )
            # Before the staged plan is written out: the counts cover the test set's own responses.
            testset_stopping = stage.stopping_summary(dataset=dataset, rules=rules)
            if progress:
                progress.update(done=1, total=4, force=True, phase="building the test set", unit="steps")
            stage.derived_questions_create(dataset=dataset)
            stage.items_create(testset=testset)
            stage.candidates_create(testset=testset)
        if progress:
            progress.update(done=2, total=4, force=True)
        testset.manifest = {
            "format_version": 2,  # 2: every file entry names its format_version
            "name": name,
            "dataset": dataset.name,
            "created_at": timezone.now().isoformat(),
            "software": {"wellchosen": package_version()},
            "seed": seed,
            "false_per_question": false_per_question,
            "annotators_per_item": dataset.annotators_per_item,
            "rules": {"version": rules.version, **rules.thresholds()},
            # How early the decisions were made (tolerance, decisions on fewer than K scores, the
            # model's expected share of changes, the spot checks' audit): of the source dataset's
            # responses, and under "testset" of the test set's own (ground truths and chosen false
            # candidates). The prior is the one the plan just fitted.
            "stopping": {
                **dataset_stopping_summary(dataset=dataset, rules=rules, fresh=False),
                "testset": testset_stopping,
            },
            "counts": {
                "questions": stage.questions,
                "derived_questions": stage.derived,
                "candidates": stage.candidates,
                "scores": stage.scores,
                "source_questions": preview.questions,
                "candidates_by_decision": preview.candidates_by_decision,
                "source_questions_by_ground_truth": preview.questions_by_ground_truth,
                "source_questions_too_few_false": preview.questions_too_few_false,
            },
            # Per source, the share of its annotated false candidates the annotators found acceptable
            # or ungrammatical (what the card reports as each source's cost).
            "candidates_by_source": [
                {key: row[key] for key in ("source", "annotated", "acceptable", "ungrammatical", "complete")}
                for row in candidate_verdicts_by_source(dataset=dataset, rules=rules)
            ],
            "agreement": {
                "dataset": dataset_agreement(dataset=dataset),
                "release": testset_agreement(testset=testset),
            },
        }
        if stage.balance is not None:
            # only in a shortcut-aware build: the manifests of other builds keep their keys
            testset.manifest["shortcut_balance"] = stage.balance
        importing.join()  # before the files' and the audit's forks
        pools: list = []  # the frozen questions as the audit reads them, from the files' read
        testset.manifest["files"] = testset_file_entries(testset, seen=lambda item: pools.append(item_pool(item)))
        # Context-free baselines over the release's frozen questions; releases built before the
        # audit existed have no such key, and their manifest, card and Croissant keep their bytes.
        testset.manifest["shortcut_audit"] = audit_beside_key_checks(testset, pools=pools, questions=stage.questions)
        testset.save(update_fields=["manifest"])
    return testset


def audit_beside_key_checks(testset: TestSet, *, pools: list, questions: int) -> dict:
    """The manifest's shortcut audit (Python: seconds at 10,000 questions), computed while the
    server checks the foreign keys of the rows the build wrote (seconds at 100,000 questions),
    which the commit would otherwise check after it: a large test set's audit runs in a forked
    child (a core of its own) meanwhile. The same audit either way."""

    def compute() -> dict:
        return testset_manifest_audit(testset, pools=pools)

    if not forks_for(questions=questions):
        deferred_checks_run()
        return compute()
    with ForkedCall(compute) as child:  # a failing check ends the child
        deferred_checks_run()
        return child.result()


def testset_file_entries(testset: TestSet, *, seen: Callable[[TestSetItem], None] | None = None) -> dict:
    """The manifest's "files": each export's name, sha256 and format version, as the test set is now
    (every export rendered in one read of the test set; ``seen`` gets each item of that read)."""
    kinds = list(EXPORT_FILES)
    digests = [hashlib.sha256() for _ in kinds]
    for chunks in render_exports(testset, [(kind, EXPORT_FILES[kind].version) for kind in kinds], seen=seen):
        for digest, chunk in zip(digests, chunks, strict=True):
            digest.update(chunk.encode("utf-8"))
    return {
        kind: {
            "name": export_filename(testset, kind),
            "sha256": digest.hexdigest(),
            "format_version": EXPORT_FILES[kind].version,
        }
        for kind, digest in zip(kinds, digests, strict=True)
    }


def package_version() -> str:
    try:
        return version("wellchosen")
    except PackageNotFoundError:
        return "unknown"
