"""Benchmark: probabilistic stopping on Sato et al.'s released human scores.

1,019 questions x (ground truth + 3 false candidates) x 5 scores. The questions are split in two
halves (seeded); the Dirichlet-multinomial priors (annotation.stopping) are fitted on one half's
complete scores and the stopping rule is run on the other half, then the halves swap. Annotators
arrive in --orders random orders per question (one annotator scores every still-open response of
the unit, as on the annotator page); annotator i scores only what is still open after 0..i-1, a
question closes when its ground truth is rejected (with the same confidence). For each tolerance:
scores saved, decisions changed against the decisions on all five scores (ground truths of every
question, false candidates of questions whose ground truth passes with all five), and questions
kept by the test-set build (ground truth passed, three false candidates kept) that change, as
the mean and the 95th percentile over orders, and the assignments saved (a unit takes annotators
until its last response stops: what a crowd platform bills; the cost planner's defaults,
annotation/selectors_stopping_cost.py). Tolerance 0 is today's deterministic rule; its
file-order run is the figure in docs/annotation.md.

The released set is filtered (every decision with five scores is "passed" or "kept"), so its
measured changes can only be false drops; the table also gives the model's own expected share,
and the same run on Zhao et al.'s unfiltered appropriateness ratings (4 annotators, 1-5, Sato et
al.'s rules) where every decision occurs.

    .venv/bin/python bench/stopping.py [--orders 1000] [--tolerances 0 0.01 0.02 ...] [--seed 0]
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotation.rules import FALSE_PER_QUESTION, FalseDecision, GroundTruthDecision  # noqa: E402
from annotation.stopping import FalseCandidateRole, GroundTruthRole, fit_alpha, outlook_table  # noqa: E402

# FilterRules' defaults (Sato et al. §3.1).
RULES = SimpleNamespace(
    acceptable_min_score=3,
    acceptable_min_count=3,
    ungrammatical_max_score=0,
    ungrammatical_min_count=3,
    ground_truth_low_max_score=3,
    ground_truth_low_min_count=3,
)
DECISIONS = [str(d) for d in (*FalseDecision, *GroundTruthDecision)]
REJECTED, PASSED, KEPT = (
    DECISIONS.index(str(d)) for d in (GroundTruthDecision.REJECTED, GroundTruthDecision.PASSED, FalseDecision.KEPT)
)


def load_sato(path: Path) -> np.ndarray:
    """(questions, ground truth + false candidates, annotators) from human_scores.jsonl."""
    scores = np.asarray([json.loads(line) for line in path.open()], dtype=np.int64)
    if scores.ndim != 3:
        raise SystemExit(f"{path}: expected [[scores] per response] per line, every line alike; got {scores.shape}")
    return scores


def load_zhao(path: Path) -> np.ndarray:
    """Zhao et al.'s appropriateness ratings (1-5, 4 annotators) as questions: per context the
    ground truth, then the negative sample and the systems' responses as candidates. Unlike the
    released test set of Sato et al. these responses were never filtered, so every decision occurs."""
    by_context: dict[str, list] = {}
    for item in json.loads(path.read_text()):
        rows = by_context.setdefault(item["context"], [None])
        ratings = item["annotations"]["appropriateness"]
        if item["model"] == "ground-truth":
            rows[0] = ratings
        else:
            rows.append(ratings)
    questions = [rows for rows in by_context.values() if rows[0] is not None]
    sizes = {len(rows) for rows in questions}
    if len(sizes) != 1:
        raise SystemExit(f"{path}: contexts with different numbers of responses ({sorted(sizes)})")
    return np.asarray(questions, dtype=np.int64)


class Tables:
    """Per role, arrays indexed by a state code (category counts in base K + 1): category of
    each score value, the state's change probability, whether it is decided and its decision."""

    def __init__(self, role, alpha, planned: int):
        K = self.K = planned
        self.role, self.alpha = role, alpha
        self.category = np.array([role.category(v) for v in range(6)])
        self.weight = (K + 1) ** self.category  # adding a score of value v adds weight[v] to the code
        size = (K + 1) ** role.categories
        self.change = np.ones(size)
        self.decided = np.zeros(size, dtype=bool)
        self.decision = np.zeros(size, dtype=np.int64)
        for seen, o in outlook_table(role, planned=K, alpha=alpha).items():
            code = sum(c * (K + 1) ** k for k, c in enumerate(seen))
            self.change[code], self.decided[code], self.decision[code] = (
                o.change,
                o.decided,
                DECISIONS.index(o.decision),
            )

    def codes(self, scores: np.ndarray) -> np.ndarray:
        """State codes after 0..K scores: scores (..., K) -> (..., K + 1)."""
        steps = self.weight[scores]
        return np.concatenate([np.zeros(steps.shape[:-1] + (1,), dtype=np.int64), np.cumsum(steps, axis=-1)], axis=-1)

    def change_at_stop(self, codes: np.ndarray, n: np.ndarray) -> np.ndarray:
        return self.change[np.take_along_axis(codes, n[..., None], axis=-1)[..., 0]]

    def stops(self, codes: np.ndarray, tolerance: float) -> np.ndarray:
        stop = self.decided[codes] | (self.change[codes] < tolerance)
        stop[..., 0] = self.decided[codes[..., 0]]  # never on the prior alone: one score first
        return stop


def run(scores: np.ndarray, gt: Tables, false: Tables, tolerance: float) -> dict:
    """One order of annotators (scores as they arrive): scores used, decisions changed, kept changed."""
    K = scores.shape[2]
    gt_codes, false_codes = gt.codes(scores[:, 0]), false.codes(scores[:, 1:])
    n_gt = np.argmax(gt.stops(gt_codes, tolerance), axis=-1)  # n = K is always decided
    gt_decision = np.take_along_axis(gt_codes, n_gt[:, None], axis=-1)[:, 0]
    gt_decision = gt.decision[gt_decision]
    close = np.where(gt_decision == REJECTED, n_gt, K)
    n_false = np.minimum(np.argmax(false.stops(false_codes, tolerance), axis=-1), close[:, None])
    false_decision = false.decision[np.take_along_axis(false_codes, n_false[..., None], axis=-1)[..., 0]]
    gt_change = gt.change_at_stop(gt_codes, n_gt)
    false_change = np.where(n_false < K, false.change_at_stop(false_codes, n_false), 0.0)
    gt_full, false_full = gt.decision[gt_codes[:, K]], false.decision[false_codes[..., K]]
    compared = ~(gt_full == REJECTED)
    changed = (gt_decision != gt_full).sum() + ((false_decision != false_full) & compared[:, None]).sum()
    # The test-set build keeps a question with a passed ground truth and FALSE_PER_QUESTION kept candidates.
    kept = (gt_decision == PASSED) & ((false_decision == KEPT).sum(axis=1) >= FALSE_PER_QUESTION)
    kept_full = (gt_full == PASSED) & ((false_full == KEPT).sum(axis=1) >= FALSE_PER_QUESTION)
    return {
        "scores": int(n_gt.sum() + n_false.sum()),
        # A unit (question) takes annotators until its last response stops: what a crowd platform bills.
        "assignments": int(np.maximum(n_gt, n_false.max(axis=1)).sum()),
        "decisions": int(len(scores) + compared.sum() * (scores.shape[1] - 1)),
        "changed": int(changed),
        "expected": float(gt_change.sum() + (false_change * compared[:, None]).sum()),
        "kept_full": int(kept_full.sum()),
        "kept_changed": int((kept != kept_full).sum()),
    }


def fitted_tables(scores: np.ndarray) -> tuple[Tables, Tables]:
    K = scores.shape[2]
    gt_role, false_role = GroundTruthRole(RULES), FalseCandidateRole(RULES)
    gt_counts = np.array([gt_role.counts(row) for row in scores[:, 0]])
    false_counts = np.array([false_role.counts(row) for row in scores[:, 1:].reshape(-1, K)])
    return Tables(gt_role, fit_alpha(gt_counts), K), Tables(false_role, fit_alpha(false_counts), K)


def folds_of(scores: np.ndarray, seed: int) -> list[tuple[np.ndarray, Tables, Tables]]:
    """Fit on one half of the questions, run on the other, and the other way round."""
    half = np.random.default_rng(seed).permutation(len(scores)) < len(scores) // 2
    folds = []
    for fit_on, run_on in ((half, ~half), (~half, half)):
        gt, false = fitted_tables(scores[fit_on])
        print(
            f"  fit on {fit_on.sum()} questions: alpha ground truth (low, not low) {np.round(gt.alpha, 2)}, "
            f"false candidates (ungrammatical, acceptable, neither) {np.round(false.alpha, 2)}"
        )
        folds.append((scores[run_on], gt, false))
    return folds


def report(name: str, scores: np.ndarray, *, orders: int, tolerances: list[float], seed: int) -> None:
    questions, responses, K = scores.shape
    print(f"\n## {name}: {questions:,} questions x {responses} responses x {K} scores")
    folds = folds_of(scores, seed)
    full = questions * responses * K
    file_order = [run(s, gt, false, 0) for s, gt, false in folds]
    used = sum(r["scores"] for r in file_order)
    print(
        f"  deterministic rule, file order: {used:,} of {full:,} scores ({1 - used / full:.1%} saved), "
        f"{sum(r['changed'] for r in file_order)} of {sum(r['decisions'] for r in file_order):,} decisions changed"
    )
    print(f"\n{orders:,} random orders of annotators per question; mean [5th percentile of saved, 95th of changed]")
    print(
        "| tolerance | scores saved | decisions changed | expected by the model | kept questions changed "
        "| assignments saved |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for tolerance in tolerances:
        order_rng = np.random.default_rng(seed + 1)  # the same orders for every tolerance
        saved, changed, expected, kept_changed, units_saved = [], [], [], [], []
        for _ in range(orders):
            totals: dict[str, float] = {}
            for s, gt, false in folds:
                order = order_rng.permuted(np.tile(np.arange(K), (len(s), 1)), axis=1)
                for key, value in run(np.take_along_axis(s, order[:, None, :], axis=2), gt, false, tolerance).items():
                    totals[key] = totals.get(key, 0) + value
            saved.append(1 - totals["scores"] / full)
            units_saved.append(1 - totals["assignments"] / (questions * K))
            changed.append(totals["changed"] / totals["decisions"])
            expected.append(totals["expected"] / totals["decisions"])
            kept_changed.append(totals["kept_changed"] / max(totals["kept_full"], 1))
        label = "0 (deterministic)" if tolerance == 0 else f"{tolerance:g}"
        print(
            f"| {label} | {np.mean(saved):.1%} [{np.percentile(saved, 5):.1%}] | "
            f"{np.mean(changed):.2%} [{np.percentile(changed, 95):.2%}] | {np.mean(expected):.2%} | "
            f"{np.mean(kept_changed):.2%} [{np.percentile(kept_changed, 95):.2%}] | "
            f"{np.mean(units_saved):.1%} [{np.percentile(units_saved, 5):.1%}] |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument(
        "--tolerances", type=float, nargs="+", default=[0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15]
    )
    parser.add_argument("--seed", type=int, default=0)
    data = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data")) / "human_annotated"
    parser.add_argument("--scores", type=Path, default=data / "eval-via-selection/human_scores.jsonl")
    parser.add_argument("--ratings", type=Path, default=data / "dstc10_track5_dev_format/dailydialog-zhao_eval.json")
    args = parser.parse_args()
    for path in (args.scores, args.ratings):
        if not path.exists():
            raise SystemExit(f"{path}: not found (set WELLCHOSEN_SHARED_DATA to the shared data folder)")
    started = time.perf_counter()
    options = {"orders": args.orders, "tolerances": args.tolerances, "seed": args.seed}
    report(
        "Sato et al., released test set (filtered: every decision is pass / kept)", load_sato(args.scores), **options
    )
    report("Zhao et al., appropriateness 1-5 (unfiltered), Sato et al.'s rules", load_zhao(args.ratings), **options)
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
