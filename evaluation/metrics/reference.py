"""Reference-based metrics of generated responses: BLEU-1/2, METEOR, ROUGE-L (library implementations).

Choices, the same for every system:

* **Tokenisation**: lower-case, then split on whitespace (:func:`tokenize`). The DailyDialog text of
  Zhao et al. is already lower-cased and tokenised with spaces before punctuation, so this keeps
  its tokens as they are; punctuation tokens count as words.
* **BLEU** (``nltk.translate.bleu_score``): BLEU-1 uses weights ``(1,)``, BLEU-2 ``(1/2, 1/2)``, with
  the usual brevity penalty. *Corpus-level* BLEU (:func:`corpus_bleu`, the system score used in the
  report) pools n-gram counts over all responses of a system, unsmoothed (a system with no matching
  bigram at all gets 0, which nltk returns as about 1e-154). *Sentence-level* BLEU
  (:func:`sentence_bleu`) averages per-response scores, smoothed with Chen & Cherry's method 1
  (``SmoothingFunction().method1``: epsilon 0.1 for a zero n-gram count),
  since most single responses share no bigram with their reference.
* **METEOR** (``nltk.translate.meteor_score``, alpha 0.9, beta 3, gamma 0.5, Porter stems, WordNet
  synonyms; mean over responses; the best over references). It needs WordNet 3.0, read from a local
  copy with nltk's ``WordNetCorpusReader`` and never downloaded: Debian's ``wordnet-base`` package
  (``apt-get install wordnet-base``, files in ``/usr/share/wordnet``), or the folder named by the
  ``WELLCHOSEN_WORDNET_DIR`` environment variable. As in nltk, synonyms are looked up after exact
  and stem matching, on the words left unmatched.
* **ROUGE-L** (``rouge_score``, F-measure of the longest common subsequence, its own tokeniser:
  lower-case, non-alphanumerics dropped, no stemming; mean over responses, best over references).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from core.wordnet import load_wordnet

METRICS = ("BLEU-1", "BLEU-2", "METEOR", "ROUGE-L")
Pair = tuple[str, Sequence[str]]  # (hypothesis, references)


def tokenize(text: str) -> list[str]:
    return text.lower().split()


def _references(references: Sequence[str] | str) -> list[str]:
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise ValueError("every hypothesis needs at least one reference")
    return refs


def _bleu_weights(n: int) -> tuple[float, ...]:
    if n < 1:
        raise ValueError(f"BLEU order must be at least 1, got {n}")
    return tuple([1.0 / n] * n)


def corpus_bleu(pairs: Sequence[Pair], n: int) -> float:
    """Corpus-level BLEU-n of one system over its (hypothesis, references) pairs, unsmoothed."""
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu

    if not pairs:
        raise ValueError("no (hypothesis, references) pairs")
    hyps = [tokenize(h) for h, _ in pairs]
    refs = [[tokenize(r) for r in _references(rs)] for _, rs in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # nltk warns when an order has no match: the score is 0
        return float(nltk_corpus_bleu(refs, hyps, weights=_bleu_weights(n)))


def sentence_bleu(hypothesis: str, references: Sequence[str] | str, n: int) -> float:
    """Sentence-level BLEU-n of one response, smoothed with Chen & Cherry's method 1."""
    from nltk.translate.bleu_score import SmoothingFunction
    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

    hyp = tokenize(hypothesis)
    refs = [tokenize(r) for r in _references(references)]
    if not hyp:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return float(
            nltk_sentence_bleu(refs, hyp, weights=_bleu_weights(n), smoothing_function=SmoothingFunction().method1)
        )


def mean_sentence_bleu(pairs: Sequence[Pair], n: int) -> float:
    return _mean(sentence_bleu(h, rs, n) for h, rs in pairs)


def meteor(hypothesis: str, references: Sequence[str] | str, wordnet=None) -> float:
    """METEOR of one response (nltk), the best over its references."""
    from nltk.translate.meteor_score import meteor_score

    wordnet = wordnet or load_wordnet()
    hyp = tokenize(hypothesis)
    refs = [tokenize(r) for r in _references(references)]
    if not hyp:
        return 0.0
    return float(meteor_score(refs, hyp, wordnet=wordnet))


def mean_meteor(pairs: Sequence[Pair], wordnet=None) -> float:
    wordnet = wordnet or load_wordnet()
    return _mean(meteor(h, rs, wordnet=wordnet) for h, rs in pairs)


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer, tokenizers

    # an explicit tokenizer: the default one is the same but logs a line at every construction
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=tokenizers.DefaultTokenizer(use_stemmer=False))


def rouge_l(hypothesis: str, references: Sequence[str] | str) -> float:
    """ROUGE-L F-measure of one response (rouge-score), the best over its references."""
    scorer = _rouge_scorer()
    return max(scorer.score(ref, hypothesis)["rougeL"].fmeasure for ref in _references(references))


def mean_rouge_l(pairs: Sequence[Pair]) -> float:
    return _mean(rouge_l(h, rs) for h, rs in pairs)


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    if not values:
        raise ValueError("no (hypothesis, references) pairs")
    return sum(values) / len(values)


def system_scores(
    pairs_by_system: Mapping[str, Sequence[Pair]],
    metrics: Sequence[str] = METRICS,
    wordnet=None,
    bleu: str = "corpus",
) -> dict[str, dict[str, float]]:
    """``{system: {metric: score}}`` over each system's (hypothesis, references) pairs.

    BLEU-1/2 are corpus-level (``bleu="sentence"``: the mean of smoothed sentence-level scores);
    METEOR and ROUGE-L are means of per-response scores.
    """
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; known: {', '.join(METRICS)}")
    if bleu not in ("corpus", "sentence"):
        raise ValueError(f"bleu must be 'corpus' or 'sentence', got {bleu!r}")
    bleu_score = corpus_bleu if bleu == "corpus" else mean_sentence_bleu
    if "METEOR" in metrics:
        wordnet = wordnet or load_wordnet()
    scores: dict[str, dict[str, float]] = {}
    for system, pairs in pairs_by_system.items():
        row = {}
        for metric in metrics:
            if metric == "BLEU-1":
                row[metric] = bleu_score(pairs, 1)
            elif metric == "BLEU-2":
                row[metric] = bleu_score(pairs, 2)
            elif metric == "METEOR":
                row[metric] = mean_meteor(pairs, wordnet=wordnet)
            else:
                row[metric] = mean_rouge_l(pairs)
        scores[system] = row
    return scores
