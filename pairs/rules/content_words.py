"""Substituted content word pairs: one context-sensitive noun of the response replaced (Okano et al.).

The noun w_i to replace. Nouns of the response are found with :class:`~pairs.nouns.NounLexicon`
plus checks that a lexicon alone cannot make.
- Names: a word capitalised inside its sentence, or one the repository mostly capitalises inside
  sentences (``name_share``: "Tom", "Bill", "Sunday").
- Verbs and adjectives: a word right after a subject pronoun or an auxiliary ("I book", "we
  need"), or right before a determiner, an object pronoun or "one" ("book a table", "the red
  one"), is not a noun. Words that are as often verbs or adjectives ("work", "shopping", "red")
  count only right after a determiner and not before another noun ("the work", not "the red car").
- A singular right after a number above one is an invariant noun ("300 yuan"), left alone.
Each noun is scored by its association with the context: the highest WordNet path similarity
between it and a noun of the context (1.0 when the context has the same lemma). The best-scored
noun is w_i; equal scores (no context nouns, or nouns equally related) are broken by the rng.

The replacement v. V holds the noun-dominant words of the repository with ``count >= min_count``
(nouns the repository uses more than once) that it does not mostly capitalise, less the words of
the context, of the response and the forms of w_i, compared by word and by noun lemma. V keeps
w_i's number (plural nouns replace plural nouns, so verbs and determiners stay in agreement), and
after "a"/"an" the article (by spelling, "an hour", "a university"). With w_{i-1} and w_{i+1}
the tokens around w_i (``<s>`` / ``</s>`` at the ends of the response):

- equally likely (EL): argmin_v [log P(v|w_{i-1}) / P(w_i|w_{i-1})]^2 + [log P(w_{i+1}|v) / P(w_{i+1}|w_i)]^2
- most likely (ML): argmax_v log P(v|w_{i-1}) + log P(w_{i+1}|v)

Both are computed over V at once from the bigram model's rows and columns. Going down the ranking,
a v too close in meaning to w_i is passed over (WordNet path similarity >= ``max_similarity``:
a synonym, hypernym or hyponym, "minute" for "moment"), since the edit must change what the
response says. ``per_question`` k
gives the k best v per criterion, all at the same w_i. Subtype ``noun`` or ``noun_plural`` (the
number of w_i). v takes w_i's capitalisation; only w_i's characters change.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from pairs.bigram import BOS, EOS, SENTENCE_OPENERS, BigramLM, normalise
from pairs.edits import Criterion, Edit, EditRule, PairType, RuleOutcome
from pairs.nouns import NounLexicon
from pairs.text import Token, splice, tokens

# Before a noun-dominant word, these make it a verb ("I book", "we need", "don ’ t mind").
_NOT_NOUN_BEFORE = frozenset(
    "i you we they he she to will would can could shall should may might must do does did not never "
    "t ll d don't didn't doesn't won't can't cannot wouldn't couldn't shouldn't let's please".split()
)
# After it, these make it a verb ("book a table", "call me") or an adjective ("the red one"); not
# "you"/"it"/"that", which start relative clauses after nouns ("the car you bought").
_NOT_NOUN_AFTER = frozenset("a an the my your his our their me him us them it one ones".split())
# "it"/"this"/"that" are left out of _NOT_NOUN_BEFORE ("give it time"); after an auxiliary that
# begins a question they are subjects, and the next word is a verb ("how much will it cost").
_INVERTED_AUXILIARIES = frozenset("will would can could shall should may might must do does did is was has had".split())
_FIXED_BEFORE = frozenset({"ago"})  # "an hour ago": only a duration fits
# After a number above one a singular form is an invariant noun ("300 yuan"): V has no such plurals.
_NUMBERS = frozenset(
    "two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred".split()
)
_AN_BEFORE_VOWEL_LETTER_EXCEPT = ("uni", "use", "usu", "uti", "eu", "one", "once")
_AN_BEFORE_CONSONANT_LETTER = ("hour", "honest", "honor", "honour", "heir")
_DETERMINERS = frozenset("a an the my your his her its our their this these those some any every each".split())


class ContentWordRule(EditRule):
    type = PairType.CONTENT

    def __init__(
        self,
        lm: BigramLM,
        lexicon: NounLexicon,
        *,
        criteria: Sequence[str] = Criterion.ALL,
        min_count: int = 2,
        name_share: float = 0.5,
        max_similarity: float = 0.5,
    ):
        unknown = set(criteria) - set(Criterion.ALL)
        if unknown or not criteria:
            raise ValueError(f"criteria must be a non-empty subset of {Criterion.ALL}, not {list(criteria)}")
        self.lm = lm
        self.lexicon = lexicon
        self.criteria = tuple(c for c in Criterion.ALL if c in criteria)
        self.min_count = min_count
        self.name_share = name_share
        self.max_similarity = max_similarity
        self._digest = lm.digest()

        words = [
            word
            for i, word in enumerate(lm.vocabulary)
            if i >= 3 and lm.count(word) >= min_count and lexicon.is_noun(word) and not self._is_name(word)
        ]
        self.vocabulary = words
        self._ids = lm.ids(words)
        self._plural = np.array([lexicon.is_plural(word) for word in words], dtype=bool)
        self._article = np.array([indefinite_article(word) for word in words])
        # Every V entry under its own spelling and its noun lemmas, to drop forms of a word at once.
        self._by_form: dict[str, list[int]] = defaultdict(list)
        for position, word in enumerate(words):
            for form in lexicon.lemmas(word):
                self._by_form[form].append(position)

    def version(self) -> str:
        return (
            f"ContentWordRule-2(lm={self._digest[:12]},{self.lexicon.version()},"
            f"min_count={self.min_count},name_share={self.name_share},max_similarity={self.max_similarity},criteria={'+'.join(self.criteria)})"
        )

    # ----------------------------------------------------------------------------- nouns
    def _is_name(self, word: str) -> bool:
        return self.lm.capitalised_share(word) > self.name_share

    def noun_positions(self, toks: Sequence[Token]) -> list[int]:
        """Indices of the tokens taken as content nouns (see the module docstring)."""
        positions = []
        for i, token in enumerate(toks):
            if not token.is_word:
                continue
            before = normalise(toks[i - 1].text) if i > 0 else ""
            after = normalise(toks[i + 1].text) if i + 1 < len(toks) else ""
            sentence_start = i == 0 or toks[i - 1].text in SENTENCE_OPENERS
            word = normalise(token.text)
            if (token.text[0].isupper() and not sentence_start) or self._is_name(word):
                continue
            if before in _NOT_NOUN_BEFORE or after in _NOT_NOUN_AFTER or after in _FIXED_BEFORE:
                continue
            if before in ("it", "this", "that") and i > 1 and normalise(toks[i - 2].text) in _INVERTED_AUXILIARIES:
                continue
            if (before.isdigit() or before in _NUMBERS) and not self.lexicon.is_plural(word):
                continue
            if not self.lexicon.is_noun(word):
                if not self.lexicon.is_ambiguous_noun(word) or before not in _DETERMINERS:
                    continue
                if self.lexicon.is_noun(after) or self.lexicon.is_ambiguous_noun(after):
                    continue
            positions.append(i)
        return positions

    def _context_nouns(self, context: Sequence[str]) -> set[str]:
        nouns = set()
        for turn in context:
            toks = tokens(turn)
            nouns.update(normalise(toks[i].text) for i in self.noun_positions(toks))
        return nouns

    def _pick_noun(self, toks, positions, context_nouns, rng) -> tuple[int, float]:
        def association(i: int) -> float:
            word = normalise(toks[i].text)
            return max((self.lexicon.similarity(word, noun) for noun in context_nouns), default=0.0)

        scores = [association(i) for i in positions]
        best = max(scores)
        return rng.choice([i for i, score in zip(positions, scores, strict=True) if score == best]), best

    # ----------------------------------------------------------------------------- replacements
    def _allowed(self, excluded_words: set[str], plural: bool, article: str) -> np.ndarray:
        allowed = self._plural == plural
        if article in ("a", "an"):
            allowed &= self._article == article
        for word in excluded_words:
            for form in self.lexicon.lemmas(word):
                allowed[self._by_form.get(form, [])] = False
        return allowed

    def scores(self, word: str, previous: str, following: str, criterion: str, candidates: np.ndarray) -> np.ndarray:
        """The criterion's value for each V position of ``candidates``, w_i = ``word``."""
        ids = self._ids[candidates]
        log_v_after_previous = np.log(self.lm.prob_next_many(previous, ids))
        log_following_after_v = np.log(self.lm.prob_many_given(following, ids))
        if criterion == Criterion.MOST_LIKELY:
            return log_v_after_previous + log_following_after_v
        log_word_after_previous = self.lm.log_prob(word, previous)
        log_following_after_word = self.lm.log_prob(following, word)
        return (log_v_after_previous - log_word_after_previous) ** 2 + (
            log_following_after_v - log_following_after_word
        ) ** 2

    def best(self, word: str, scores: np.ndarray, candidates: np.ndarray, criterion: str, k: int) -> list[int]:
        """Indices of the k best scores (ties: the earlier, i.e. alphabetical, V entry), passing over
        nouns too close in meaning to w_i to change what the response says."""
        key = scores if criterion == Criterion.EQUALLY_LIKELY else -scores
        chosen = []
        for j in np.lexsort((np.arange(len(key)), key)):
            if self.lexicon.similarity(word, self.vocabulary[candidates[j]]) < self.max_similarity:
                chosen.append(int(j))
                if len(chosen) == k:
                    break
        return chosen

    # ----------------------------------------------------------------------------- the rule
    def propose(
        self, *, context: Sequence[str], response: str, rng: random.Random, per_question: int = 1
    ) -> RuleOutcome:
        if per_question < 1:
            raise ValueError("per_question must be at least 1")
        toks = tokens(response)
        positions = self.noun_positions(toks)
        if not positions:
            return RuleOutcome([], skipped="no_noun")
        context_nouns = self._context_nouns(context)
        i, association = self._pick_noun(toks, positions, context_nouns, rng)
        target = toks[i]
        word = normalise(target.text)
        previous = normalise(toks[i - 1].text) if i > 0 else BOS
        following = normalise(toks[i + 1].text) if i + 1 < len(toks) else EOS

        excluded = {normalise(t.text) for turn in context for t in tokens(turn) if t.is_word}
        excluded |= {normalise(t.text) for t in toks if t.is_word}
        plural = self.lexicon.is_plural(word)
        candidates = np.flatnonzero(self._allowed(excluded, plural, previous))
        if len(candidates) == 0:
            return RuleOutcome([], skipped="no_replacement")

        edits = []
        for criterion in self.criteria:
            values = self.scores(word, previous, following, criterion, candidates)
            for j in self.best(word, values, candidates, criterion, per_question):
                replacement = _cased(self.vocabulary[candidates[j]], target.text)
                incorrect, incorrect_span = splice(response, target.start, target.end, replacement)
                details = {
                    "word": target.text,
                    "replacement": replacement,
                    "previous": previous,
                    "next": following,
                    "score": float(values[j]),
                    "association": round(float(association), 6),
                    "lm": self._digest[:12],
                }
                edits.append(
                    Edit(
                        type=self.type,
                        subtype="noun_plural" if plural else "noun",
                        incorrect=incorrect,
                        span=(target.start, target.end),
                        incorrect_span=incorrect_span,
                        criterion=criterion,
                        details=details,
                    )
                )
        return RuleOutcome(edits)


def indefinite_article(word: str) -> str:
    """ "a" or "an" by the word's spelling, with the usual exceptions ("a university", "an hour")."""
    if word.startswith(_AN_BEFORE_CONSONANT_LETTER):
        return "an"
    if word[0] in "aeiou" and not word.startswith(_AN_BEFORE_VOWEL_LETTER_EXCEPT):
        return "an"
    return "a"


def _cased(replacement: str, original: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[0].isupper():
        return replacement[0].upper() + replacement[1:]
    return replacement
