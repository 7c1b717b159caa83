"""The shortcut audit's candidate-only language-model baseline (testsets.shortcuts): a registered
system scores every candidate with an empty context and picks the one it finds likeliest (lowest
mean loss, its selection rule). Registered from EvaluationConfig.ready(), since testsets sits
below evaluation."""

from collections.abc import Iterator

import numpy as np

from core.errors import UserError
from evaluation.models import System
from testsets.shortcuts.baselines import AuditOptions, Baseline
from testsets.shortcuts.features import CandidateTable

BATCH_QUESTIONS = 64


class CandidateOnlyLM(Baseline):
    name = "candidate_only_lm"
    label = "a system scoring the candidates alone (empty context)"

    def __init__(self) -> None:
        self._system = ""

    @classmethod
    def wanted(cls, options: AuditOptions) -> bool:
        return options.system is not None

    @classmethod
    def check(cls, options: AuditOptions) -> None:
        _system(options.system)

    def scores(self, table: CandidateTable, options: AuditOptions) -> np.ndarray:
        from evaluation.scoring.loading import scorer_for  # a model loads: torch, on use only

        system = _system(options.system)
        self._system = system.name
        scorer = scorer_for(system)
        losses: list[float] = []
        for batch in _batches(table):
            scored = scorer.score([[] for _ in batch], [list(pool.texts) for pool in batch])
            losses += [s.loss for question in scored for s in question]
        return -np.asarray(losses, dtype=np.float64)

    def details(self) -> dict:
        return {"system": self._system}


def _system(name: str | None) -> System:
    from evaluation.scoring.backends import scoring_kinds

    system = System.objects.filter(name=name).first()
    if system is None:
        raise UserError(f"no system {name!r}")
    if system.kind not in scoring_kinds():
        raise UserError(f"system {name!r} ({system.get_kind_display()}) cannot score candidates")
    return system


def _batches(table: CandidateTable) -> Iterator[list]:
    for start in range(0, table.n_questions, BATCH_QUESTIONS):
        yield table.pools[start : start + BATCH_QUESTIONS]
