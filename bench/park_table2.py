"""Reproduction: Park et al. (NAACL 2021) Table 2, reference-based rows.

Response-level Pearson r and Spearman rho (two-sided p-values) of BLEU, METEOR and ROUGE-L against
the mean human *appropriateness* rating of Zhao et al. (ACL 2020), on their DailyDialog and PersonaChat
ratings (DSTC10 track 5 format, ``human_annotated/dstc10_track5_dev_format/`` in ../shared/data).
Each response is scored against the file's reference; the ground-truth response itself is left out
(it is the reference); see evaluation/metrics/response_correlation.py for the choices.

Prints the main table (BLEU-2, METEOR, ROUGE-L beside the paper's numbers), then r / rho of BLEU-1..4,
METEOR and ROUGE-L for three response sets: without the ground truth (the main one), without the
ground truth and the negative sample (generated responses only), and all responses.

    .venv/bin/python bench/park_table2.py [--bleu BLEU-2] [--aspect appropriateness]
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.wordnet import WordNetMissing, load_wordnet  # noqa: E402
from evaluation.metrics.response_correlation import (  # noqa: E402
    DEFAULT_EXCLUDE,
    RESPONSE_METRICS,
    correlate_responses,
    format_p,
    load_rated_responses,
)

FOLDER = "human_annotated/dstc10_track5_dev_format"
DATASETS = {"DailyDialog": "dailydialog-zhao_eval.json", "PersonaChat": "persona-zhao_eval.json"}
# Park et al. (2021), Table 2: (Pearson r, Spearman rho) per dataset
PAPER = {
    "BLEU": {"DailyDialog": (0.08, 0.05), "PersonaChat": (0.19, 0.23)},
    "METEOR": {"DailyDialog": (0.11, 0.33), "PersonaChat": (0.23, 0.18)},
    "ROUGE": {"DailyDialog": (0.12, 0.09), "PersonaChat": (0.25, 0.21)},
}
RESPONSE_SETS = {
    "without ground truth (main)": DEFAULT_EXCLUDE,
    "generated only (no ground truth, no negative sample)": frozenset({"ground-truth", "negative-sample"}),
    "all responses": frozenset(),
}


def cell(value: float, p: float) -> str:
    return f"{value:.3f} (p={format_p(p)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--bleu", choices=[m for m in RESPONSE_METRICS if m.startswith("BLEU")], default="BLEU-2",
        help="the BLEU of the main table (default BLEU-2, sentence-level, smoothed)",
    )  # fmt: skip
    parser.add_argument("--aspect", default="appropriateness")
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    args = parser.parse_args()
    paths = {name: args.shared / FOLDER / file for name, file in DATASETS.items()}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        sys.exit(f"real data not found: {', '.join(missing)} (set WELLCHOSEN_SHARED_DATA)")
    try:
        wordnet = load_wordnet()
    except WordNetMissing as error:
        sys.exit(str(error))

    started = time.perf_counter()
    tables = {}  # (response set, dataset) -> (n, {metric: correlation})
    for set_name, exclude in RESPONSE_SETS.items():
        for dataset, path in paths.items():
            responses = load_rated_responses(path, exclude=exclude, aspect=args.aspect)
            tables[set_name, dataset] = (len(responses), correlate_responses(responses, wordnet=wordnet))
    seconds = time.perf_counter() - started

    main_set = next(iter(RESPONSE_SETS))
    print(f"Park et al. (2021) Table 2, reference-based rows: {args.aspect}, responses {main_set}, {args.bleu}\n")
    header = f"{'metric':<8}{'dataset':<13}{'n':>5}  {'r (p)':<20}{'rho (p)':<20}{'paper r':>8}{'paper rho':>11}"
    print(header)
    print("-" * len(header))
    for paper_name, metric in (("BLEU", args.bleu), ("METEOR", "METEOR"), ("ROUGE", "ROUGE-L")):
        for dataset in DATASETS:
            n, table = tables[main_set, dataset]
            c = table[metric]
            r_paper, rho_paper = PAPER[paper_name][dataset]
            print(
                f"{metric:<8}{dataset:<13}{n:>5}  {cell(c.pearson, c.pearson_p):<20}"
                f"{cell(c.spearman, c.spearman_p):<20}{r_paper:>8.2f}{rho_paper:>11.2f}"
            )

    print("\nr / rho by response set and metric (BLEU sentence-level, smoothed)\n")
    header = f"{'response set':<54}{'dataset':<13}{'n':>5}  " + "".join(f"{m:>15}" for m in RESPONSE_METRICS)
    print(header)
    print("-" * len(header))
    for (set_name, dataset), (n, table) in tables.items():
        values = "".join(f"{f'{table[m].pearson:.3f} / {table[m].spearman:.3f}':>15}" for m in RESPONSE_METRICS)
        print(f"{set_name:<54}{dataset:<13}{n:>5}  {values}")
    print(f"\n{seconds:.1f} s for {len(tables)} tables of {len(RESPONSE_METRICS)} metrics")


if __name__ == "__main__":
    main()
