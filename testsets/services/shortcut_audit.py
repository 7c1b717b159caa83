"""audit_shortcuts: audit a dataset's pools or a test set for context-free shortcuts and store the
result (testsets.shortcuts), so that pages read it instead of recomputing."""

import random

from django.conf import settings

from annotation.models import Dataset
from core.errors import UserError
from core.services.jobs import JobProgress
from testsets.models import ShortcutAudit, TestSet
from testsets.selectors import dataset_pools, testset_pools
from testsets.shortcuts.audit import shortcut_audit_compute
from testsets.shortcuts.baselines import AuditOptions, shortcut_baselines
from testsets.shortcuts.pools import Pool

MANIFEST_FOLDS = 5


def shortcut_audit_options_check(*, system: str | None = None, folds: int = 5, seed: int = 0) -> AuditOptions:
    """The options of an audit, checked by every baseline it will run (an unknown system, too few
    folds) before anything is computed or queued."""
    if folds < 2:
        raise UserError(f"--folds must be at least 2, not {folds}")
    options = AuditOptions(seed=seed, folds=folds, system=system or None)
    for cls in shortcut_baselines():
        if cls.wanted(options):
            cls.check(options)
    return options


def shortcut_audit_run(
    *,
    dataset_name: str | None = None,
    testset_name: str | None = None,
    system: str | None = None,
    folds: int = 5,
    seed: int = 0,
    progress: JobProgress | None = None,
) -> ShortcutAudit:
    """Audit the pools of dataset ``dataset_name`` (every original question with all its candidates)
    or the test set ``testset_name`` (its chosen candidates), and store the audit."""
    if (dataset_name is None) == (testset_name is None):
        raise UserError("audit either a dataset's pools (--dataset) or a test set (--testset)")
    options = shortcut_audit_options_check(system=system, folds=folds, seed=seed)
    if dataset_name is not None:
        dataset = Dataset.objects.filter(name=dataset_name).first()
        if dataset is None:
            raise UserError(f"no dataset {dataset_name!r}")
        if dataset.is_rating:
            raise UserError(
                f"dataset {dataset.name!r} rates generated responses 1-5: it has no ground truth among candidates "
                "to audit"
            )
        pools, target = list(dataset_pools(dataset=dataset)), {"dataset": dataset}
        source = {"kind": "dataset pools", "name": dataset.name}
    else:
        testset = TestSet.objects.filter(name=testset_name).first()
        if testset is None:
            raise UserError(f"no test set {testset_name!r}")
        pools, target = list(testset_pools(testset=testset)), {"testset": testset}
        source = {"kind": "test set", "name": testset.name}
    result = {"source": source, **shortcut_audit_compute(pools, options, progress=progress)}
    return ShortcutAudit.objects.create(result=result, **target)


def testset_manifest_audit(testset: TestSet, *, pools: list[Pool] | None = None) -> dict:
    """The audit that a release's manifest records: the baselines that need no system, over its
    frozen questions (``pools``, when the caller read them already), seeded with the release's seed."""
    options = AuditOptions(seed=testset.seed or 0, folds=MANIFEST_FOLDS)
    pools = list(testset_pools(testset=testset)) if pools is None else pools
    limit = settings.WELLCHOSEN_MANIFEST_AUDIT_MAX_QUESTIONS
    if limit <= 0 or len(pools) <= limit:
        return shortcut_audit_compute(pools, options)
    # A large release is audited on a seeded sample: its accuracies' intervals are already within
    # about a point at 10,000 questions, and the classifier's folds cost time per question.
    chosen = sorted(random.Random(options.seed).sample(range(len(pools)), limit))
    return {**shortcut_audit_compute([pools[i] for i in chosen], options), "sampled_from": len(pools)}
