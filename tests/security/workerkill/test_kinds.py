"""Every job kind is either killed mid-job by this suite or says why it is not: a new kind fails
here until it is one or the other."""

from core.job_registry import job_kinds_all

KILLED_MID_JOB = {
    "import_dialogues": "test_imports.py",
    "import_testset": "test_imports.py",
    "import_testset_hf": "test_imports.py",
    "import_scores": "test_imports.py",
    "import_repository": "test_imports.py",
    "build_testset": "test_imports.py",
    "build_pools": "test_retrieval.py",
    "build_indexes": "test_retrieval.py",
    "evaluate": "test_evaluation.py",
    "evaluate_pairs": "test_evaluation.py",
    "generate": "test_evaluation.py",
    "generate_negatives": "test_negatives.py",
    "build_pairs": "test_pairs.py",
    "campaign": "test_campaign.py",
}
NOT_KILLED = {
    "crowd_publish": "seconds of calls to the crowd platform; a retry replays each HIT's UniqueRequestToken, so "
    "none is made twice",
    "crowd_sync": "seconds of calls to the crowd platform; every run reads the platform's state afresh",
    "load_demo": "each demo step skips what is present, so a retry loads what the killed run had not committed",
    "quality_refresh": "one short read of a dataset's scores and one snapshot row",
    "audit_shortcuts": "reads only, then one ShortcutAudit row written at the end: a killed run writes nothing and "
    "the retry computes the same audit again (seeded folds)",
    "import_pairs": "one transaction: a kill rolls the whole import back and the retry reads the file from its "
    "first line; a retry after the commit finds the set made from the same file and returns its report",
}


def test_every_job_kind_is_killed_mid_job_or_says_why_not():
    kinds = {kind.name for kind in job_kinds_all()}
    assert kinds - KILLED_MID_JOB.keys() - NOT_KILLED.keys() == set(), "a new job kind: add a worker-kill test"
    assert (KILLED_MID_JOB.keys() | NOT_KILLED.keys()) - kinds == set(), "a job kind is gone: remove it here"
