"""What each test-set job kind runs: its typed parameters handed to the service."""

from pathlib import Path

from core.models import Job
from core.services.jobs import JobProgress
from testsets.job_params import AuditShortcutsParams, BuildTestsetParams, ImportHFTestsetParams, ImportTestsetParams

from .build import testset_build
from .import_hf import testset_hf_import
from .import_tsv import testset_import
from .shortcut_audit import shortcut_audit_run


def import_testset(params: ImportTestsetParams, job: Job, progress: JobProgress) -> dict:
    return testset_import(
        tsv_path=Path(params.path),
        scores_path=Path(params.scores_path) if params.scores_path else None,
        dataset_name=params.dataset,
        context_turns=params.context_turns,
        encoding=params.encoding,
        progress=progress,
    )


def import_testset_hf(params: ImportHFTestsetParams, job: Job, progress: JobProgress) -> dict:
    return testset_hf_import(folder=Path(params.path), dataset_name=params.dataset, name=params.name, progress=progress)


def build_testset(params: BuildTestsetParams, job: Job, progress: JobProgress) -> dict:
    testset = testset_build(
        dataset_name=params.dataset,
        name=params.name,
        false_per_question=params.false_per_question,
        seed=params.seed,
        rules_version=params.rules_version,
        balance=params.balance(),
        progress=progress,
    )
    balance = testset.manifest.get("shortcut_balance")
    unbalanced = {"unbalanced": balance["unbalanced"]} if balance else {}
    return {"testset_id": testset.pk, "name": testset.name, **testset.manifest["counts"], **unbalanced}


def audit_shortcuts(params: AuditShortcutsParams, job: Job, progress: JobProgress) -> dict:
    audit = shortcut_audit_run(
        dataset_name=params.dataset,
        testset_name=params.testset,
        system=params.system,
        folds=params.folds,
        seed=params.seed,
        progress=progress,
    )
    result = audit.result
    return {
        "audit_id": audit.pk,
        "dataset": audit.dataset.name if audit.dataset_id else None,
        "testset_id": audit.testset_id,
        "source": f"{result['source']['kind']} {result['source']['name']}",
        "questions": result["questions"],
        "chance": result["chance"],
        "above_chance": result["above_chance"],
    }


HANDLERS = {
    ImportTestsetParams: import_testset,
    ImportHFTestsetParams: import_testset_hf,
    BuildTestsetParams: build_testset,
    AuditShortcutsParams: audit_shortcuts,
}
