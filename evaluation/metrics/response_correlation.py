"""Response-level correlation of reference-based metrics with human ratings (Park et al. 2021, Table 2).

Where :mod:`evaluation.report` ranks *systems*, this correlates *responses*: each rated response of a
Zhao et al. (2020) file (DSTC10 track 5 format, :func:`evaluation.human.read_zhao`) gets a metric score
against the file's reference and a human score, the mean of its annotators' ratings of one aspect
(appropriateness by default), and Pearson's r and Spearman's rho (``scipy.stats``, two-sided p-values;
Spearman with average ranks for ties) are taken over the responses.

Choices:

* **Which responses**: every rated response except the ``ground-truth`` one by default
  (:data:`DEFAULT_EXCLUDE`). The ground truth *is* the reference, so every metric gives it the maximum
  score; with its high human ratings it would put 100 (DailyDialog) or 150 (PersonaChat) points in the
  top corner and lift every correlation to 0.23–0.38 whatever the metric measures. The negative sample
  (a random utterance) stays: it is a real response with real ratings, and a metric should score it low.
* **Metrics**: :func:`evaluation.metrics.reference.sentence_bleu` (BLEU-1..4, smoothed with Chen & Cherry's
  method 1, since most single responses share no higher-order n-gram with their reference),
  :func:`~evaluation.metrics.reference.meteor` and :func:`~evaluation.metrics.reference.rouge_l`, with the
  tokenisation of that module (lower-case, whitespace split; ROUGE-L its own tokeniser), best score over the
  references (one per response in these files).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.wordnet import load_wordnet
from evaluation.human import RatedResponse, read_zhao
from evaluation.metrics.reference import meteor, rouge_l, sentence_bleu

RESPONSE_METRICS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L")
DEFAULT_EXCLUDE = frozenset({"ground-truth"})


@dataclass(frozen=True)
class ResponseCorrelation:
    n: int
    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float


def pearson_spearman(x: Sequence[float], y: Sequence[float]) -> ResponseCorrelation:
    """Pearson's r and Spearman's rho of two paired score vectors, with scipy's two-sided p-values."""
    xv, yv = np.asarray(list(x), float), np.asarray(list(y), float)
    if xv.shape != yv.shape or xv.ndim != 1:
        raise ValueError(f"score vectors differ in length: {len(xv)} and {len(yv)}")
    if len(xv) < 3:
        raise ValueError(f"a correlation with a p-value needs at least 3 responses, got {len(xv)}")
    if not (np.isfinite(xv).all() and np.isfinite(yv).all()):
        raise ValueError("scores must be finite numbers")
    if np.ptp(xv) == 0 or np.ptp(yv) == 0:
        # scipy would warn and return NaN: a constant score orders nothing
        raise ValueError("one of the score vectors is constant: no correlation")
    from scipy import stats  # imported when used: it costs every process ~0.4 s to start

    pearson = stats.pearsonr(xv, yv)
    spearman = stats.spearmanr(xv, yv)
    return ResponseCorrelation(
        n=len(xv),
        pearson=float(pearson.statistic),
        pearson_p=float(pearson.pvalue),
        spearman=float(spearman.statistic),
        spearman_p=float(spearman.pvalue),
    )


def load_rated_responses(
    path: str | Path, *, exclude: Iterable[str] = DEFAULT_EXCLUDE, aspect: str = "appropriateness"
) -> list[RatedResponse]:
    """The rated responses of a Zhao-format file whose ``model`` is not in ``exclude``, in file order."""
    excluded = frozenset(exclude)
    return [r for r in read_zhao(path, aspect=aspect) if r.system not in excluded]


def metric_scores(
    responses: Sequence[RatedResponse], metrics: Sequence[str] = RESPONSE_METRICS, wordnet=None
) -> dict[str, list[float]]:
    """``{metric: [score of response 1, ...]}``, each response against its references."""
    unknown = set(metrics) - set(RESPONSE_METRICS)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; known: {', '.join(RESPONSE_METRICS)}")
    if "METEOR" in metrics:
        wordnet = wordnet or load_wordnet()
    scores: dict[str, list[float]] = {}
    for metric in metrics:
        if metric.startswith("BLEU-"):
            n = int(metric.removeprefix("BLEU-"))
            scores[metric] = [sentence_bleu(r.response, r.references, n) for r in responses]
        elif metric == "METEOR":
            scores[metric] = [meteor(r.response, r.references, wordnet=wordnet) for r in responses]
        else:
            scores[metric] = [rouge_l(r.response, r.references) for r in responses]
    return scores


def human_scores(responses: Iterable[RatedResponse]) -> list[float]:
    """Each response's mean annotator rating."""
    return [r.mean_rating for r in responses]


def correlate_responses(
    responses: Sequence[RatedResponse], metrics: Sequence[str] = RESPONSE_METRICS, wordnet=None
) -> dict[str, ResponseCorrelation]:
    """``{metric: correlation of its per-response scores with the mean human rating}``."""
    human = human_scores(responses)
    return {
        metric: pearson_spearman(values, human)
        for metric, values in metric_scores(responses, metrics, wordnet=wordnet).items()
    }


def response_level_table(
    path: str | Path,
    *,
    metrics: Sequence[str] = RESPONSE_METRICS,
    exclude: Iterable[str] = DEFAULT_EXCLUDE,
    aspect: str = "appropriateness",
    wordnet=None,
) -> dict[str, ResponseCorrelation]:
    """Read a Zhao-format file and correlate each metric with the human ratings over its responses."""
    return correlate_responses(load_rated_responses(path, exclude=exclude, aspect=aspect), metrics, wordnet=wordnet)


def format_p(p: float) -> str:
    """A p-value for a table: three decimals, or two significant digits below 0.001."""
    if math.isnan(p):
        return "nan"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"
