"""The choice of one question's pool from its ranked hits (Sato et al. §3.1): ``lexical`` then
``dense`` candidates that pass the exclusions (the question's own texts, excluded datasets, too
few tokens, paraphrases of the ground truth), de-duplicated by normalised text and by meaning (a hit
as similar to a chosen candidate as a paraphrase is to the ground truth is left out), with every
hit left out recorded with its reason."""

import math
from dataclasses import dataclass, field

import numpy as np

from annotation.models import Candidate, CandidateSource
from core.text import tokenised_style
from retrieval.job_params import BuildPoolsParams
from retrieval.models import ExclusionReason


@dataclass(frozen=True)
class PoolSettings:
    # The defaults are the job's (BuildPoolsParams): one place for each.
    lexical: int = BuildPoolsParams.default("lexical")
    dense: int = BuildPoolsParams.default("dense")
    min_tokens: int = BuildPoolsParams.default("min_tokens")
    paraphrase_threshold: float = BuildPoolsParams.default("paraphrase_threshold")
    fetch: int = 50  # hits asked of each retriever, so that enough survive the exclusions
    # Prefer hits like the ground truth in length and style (issue: the ground truth must not stand
    # out from its false candidates by the candidates alone): such hits first, each group in rank order.
    match_surface: bool = BuildPoolsParams.default("match_surface")

    @property
    def size(self) -> int:
        return self.lexical + self.dense


@dataclass
class _Choice:
    utterance: tuple  # (id, text, text_hash, n_tokens)
    found: list = field(default_factory=list)  # [{"retriever", "score", "rank", "version"}]


def pool_choose(
    ranked,
    *,
    utterances,
    vectors,
    query,
    blocked,
    excluded,
    settings: PoolSettings,
    versions,
    ground_truth_hash: str | None = None,
    ground_truth: str | None = None,
) -> tuple[list[_Choice], list[dict]]:
    """Take ``lexical`` then ``dense`` candidates that pass the exclusions, de-duplicated by
    normalised text; when one retriever runs dry the other fills the pool up to M.

    Also returns the hits left out, each with its ExclusionReason, down to the deepest rank of
    each retriever the pool looked at (all of them for a retriever that ran dry). With
    ``settings.match_surface`` each retriever's hits like ``ground_truth`` (surface_like) come first;
    a hit passed over for that is recorded as a surface mismatch."""
    usable: dict[str, list[tuple]] = {}
    dropped: dict[str, list[dict]] = {}
    for retriever, hits in ranked.items():
        usable[retriever], dropped[retriever] = [], []
        for utterance_id, score, rank in hits:
            utterance = utterances.get(utterance_id)
            reason, detail = _exclusion(
                utterance,
                vector=vectors.get(utterance_id),
                query=query,
                blocked=blocked,
                excluded=excluded,
                settings=settings,
                ground_truth_hash=ground_truth_hash,
            )
            if reason:
                dropped[retriever].append(
                    {
                        "retriever": retriever,
                        "rank": rank,
                        "score": float(score),
                        "utterance_id": utterance_id,
                        "text": utterance[1] if utterance else "",
                        "reason": reason,
                        **detail,
                    }
                )
                continue
            usable[retriever].append(
                (utterance, {"retriever": retriever, "score": score, "rank": rank, "version": versions[retriever]})
            )
    if settings.match_surface and ground_truth is not None:
        for retriever, hits in usable.items():
            like = [surface_like(utterance[1], ground_truth) for utterance, _ in hits]
            usable[retriever] = [h for h, ok in zip(hits, like, strict=True) if ok] + [
                h for h, ok in zip(hits, like, strict=True) if not ok
            ]
    pool: dict[str, _Choice] = {}
    looked = dict.fromkeys(usable, 0)  # how many usable hits of each retriever the pool went through
    chosen: list[tuple[np.ndarray, str]] = []  # the pool's vectors and texts, in the order taken
    near: dict[tuple[str, int], dict] = {}  # (retriever, rank) of a hit left out as a near-duplicate

    def near_duplicate(utterance) -> dict | None:
        """The chosen candidate ``utterance`` is as similar to as a paraphrase (None when none is)."""
        vector = vectors.get(utterance[0])
        if vector is None or not chosen:
            return None
        similarity, text = max(((float(np.dot(vector, v)), t) for v, t in chosen), key=lambda pair: pair[0])
        return {"similarity": similarity, "of": text} if similarity >= settings.paraphrase_threshold else None

    def take(retriever: str, limit: int) -> None:
        for i, (utterance, found) in enumerate(usable[retriever]):
            if len(pool) >= settings.size or limit <= 0:
                return
            looked[retriever] = max(looked[retriever], i + 1)
            choice = pool.get(utterance[2])
            if choice is None:
                duplicate = near_duplicate(utterance)
                if duplicate is not None:
                    near[(retriever, found["rank"])] = duplicate
                    continue
                pool[utterance[2]] = _Choice(utterance, [found])
                if vectors.get(utterance[0]) is not None:
                    chosen.append((vectors[utterance[0]], utterance[1]))
                limit -= 1
            elif all(f["retriever"] != retriever for f in choice.found):
                choice.found.append(found)  # found by both retrievers: recorded, not counted twice

    take("lexical", settings.lexical)
    take("dense", settings.dense)
    take("lexical", settings.size)  # fill up when a retriever ran dry
    take("dense", settings.size)
    in_pool = {(f["retriever"], f["rank"]) for choice in pool.values() for f in choice.found}
    exclusions = []
    for retriever, hits in usable.items():
        seen = hits[: looked[retriever]]
        ran_dry = looked[retriever] == len(hits)
        deepest = max(found["rank"] for _, found in seen) if seen and not ran_dry else None
        exclusions.extend(e for e in dropped[retriever] if deepest is None or e["rank"] < deepest)
        # Hits ranked above the deepest one taken that the pool did not reach: passed over as unlike
        # the ground truth (only with match_surface, which reorders the hits).
        exclusions.extend(
            _passed_over(retriever, utterance, found, reason=ExclusionReason.SURFACE_MISMATCH.value)
            for utterance, found in hits[looked[retriever] :]
            if deepest is not None and found["rank"] < deepest
        )
        # A second utterance of the same retriever with the same normalised text as one taken, or
        # one that means the same as one taken.
        exclusions.extend(
            _passed_over(
                retriever,
                utterance,
                found,
                **(
                    {"reason": ExclusionReason.NEAR_DUPLICATE.value, **near[(retriever, found["rank"])]}
                    if (retriever, found["rank"]) in near
                    else {"reason": ExclusionReason.DUPLICATE.value}
                ),
            )
            for utterance, found in seen
            if (retriever, found["rank"]) not in in_pool
        )
    # Other hits of an already chosen text by the second retriever are recorded too.
    for retriever, hits in usable.items():
        for utterance, found in hits:
            choice = pool.get(utterance[2])
            if choice is not None and all(f["retriever"] != retriever for f in choice.found):
                choice.found.append(found)
    exclusions.sort(key=lambda e: (e["retriever"], e["rank"]))
    return list(pool.values()), exclusions


def _passed_over(retriever: str, utterance: tuple, found: dict, **reason) -> dict:
    """The exclusion record of a usable hit the pool did not take, with why (``reason`` and details)."""
    return {
        "retriever": retriever,
        "rank": found["rank"],
        "score": float(found["score"]),
        "utterance_id": utterance[0],
        "text": utterance[1],
        **reason,
    }


# How far a candidate's length may be from the ground truth's to count as like it (a factor).
SURFACE_LENGTH_FACTOR = 1.5


def surface_like(text: str, ground_truth: str) -> bool:
    """Whether ``text`` is like ``ground_truth`` on the surface: length within a factor of
    SURFACE_LENGTH_FACTOR (in characters) and the same tokenisation style."""
    ratio = abs(math.log((len(text) + 1) / (len(ground_truth) + 1)))
    return ratio <= math.log(SURFACE_LENGTH_FACTOR) and tokenised_style(text) == tokenised_style(ground_truth)


def _exclusion(
    utterance, *, vector, query, blocked, excluded, settings: PoolSettings, ground_truth_hash
) -> tuple[str, dict]:
    """Why a retrieved utterance cannot be a candidate ("" when it can), with what decided it."""
    if utterance is None:
        return ExclusionReason.MISSING.value, {}
    if utterance[2] in blocked:
        reason = ExclusionReason.GROUND_TRUTH if utterance[2] == ground_truth_hash else ExclusionReason.CONTEXT
        return reason.value, {}
    if utterance[2] in excluded:
        return ExclusionReason.EXCLUDED_DATASET.value, {}
    if utterance[3] < settings.min_tokens:
        return ExclusionReason.TOO_SHORT.value, {"tokens": utterance[3]}
    similarity = float(np.dot(vector, query))
    if similarity >= settings.paraphrase_threshold:
        return ExclusionReason.PARAPHRASE.value, {"similarity": similarity}
    return "", {}


def pool_candidate(question_id: int, choice: _Choice) -> Candidate:
    first = choice.found[0]
    utterance_id, text, digest, _ = choice.utterance
    return Candidate(
        question_id=question_id,
        utterance_id=utterance_id,
        text=text,
        text_hash=digest,
        source=CandidateSource.LEXICAL if first["retriever"] == "lexical" else CandidateSource.DENSE,
        retrieval_score=first["score"],
        rank=first["rank"],
        retriever_version=first["version"][:200],
        retrieval=choice.found,
    )
