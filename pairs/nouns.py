"""Which words are content nouns, from the local WordNet 3.0 (:mod:`core.wordnet`).

WordNet lists the words that CAN be nouns, and many of them are mostly something else in
dialogue: "like", "help", "need" (verbs), "sure" (adjective), "home", "today" (adverbs). A word is
scored by its noun share: the tagged-corpus frequencies of WordNet's senses (``lemma.count()``,
from SemCor) of the word's noun base form against those of its verb, adjective and adverb base
forms (``morphy`` per part of speech, so "running" is weighed against the verb "run"). When none of
the senses was ever tagged the numbers of senses stand in for the frequencies.

- :meth:`NounLexicon.is_noun`: noun share > ``dominant`` (0.5): a noun wherever it stands.
- :meth:`NounLexicon.is_ambiguous_noun`: share >= ``ambiguous`` (0.2) but not dominant ("work",
  "love", "shopping"): the rule takes it as a noun only after a determiner ("the work").
- Words whose noun senses are all proper names ("Mary", "US", "IT") are not nouns: WordNet writes
  them capitalised, and lower-cased dialogue text would otherwise turn "us" into a noun.
- :data:`STOP_WORDS`: function words, pronouns, contraction pieces, greetings, titles, and frequent
  words that WordNet lists as nouns but that dialogue uses in fixed phrases or adverbially ("a
  lot", "of course", "kind of", "go home", "see you tomorrow"): replacing them breaks the phrase
  instead of changing what the response is about.

Plurals: ``morphy`` gives the singular ("cars" -> "car", "men" -> "man" through WordNet's exception
list). A word is plural when WordNet's exception list maps it to another noun, or when it ends in
"s" (not "ss": "boss" is not the plural of the genus "bos") and has a noun base form other than
itself; "people", "police", "cattle" and "clothes" are listed as plural.
"""

from __future__ import annotations

from functools import lru_cache

from core.wordnet import load_wordnet

STOP_WORDS = frozenset(
    """
    i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself
    we us our ours ourselves they them their theirs themselves one ones someone anyone everyone no_one somebody
    anybody everybody nobody something anything everything nothing thing things stuff
    a an the this that these those some any all both each every either neither other another such
    and or but if so as of at by for from in into on onto off out over under up down to with without about
    will would can could shall should may might must do does did done be am is are was were been being
    have has had get got ll ve re don didn doesn isn aren wasn weren won wouldn couldn shouldn haven hasn hadn ain
    yes yeah yep no nope ok okay hello hi hey bye goodbye thanks thank please sorry well oh ah uh um wow
    sir madam ma'am mr mrs ms dr miss mister dear honey
    what who whom whose which when where why how while whether till until
    kind kinds sort lot lots bit couple course deal way ways part matter case fact sense plenty front
    today tonight tomorrow yesterday home right back second half
    hundred hundreds thousand thousands million millions dozen
    sound sounds excuse favorite favourite current
    """.split()
)

_PLURAL_ONLY = frozenset({"people", "police", "cattle", "clothes"})


class NounLexicon:
    """Noun decisions for lower-cased words; needs the local WordNet (``core.wordnet``)."""

    def __init__(self, *, dominant: float = 0.5, ambiguous: float = 0.2, wordnet=None):
        if not 0 < ambiguous <= dominant < 1:
            raise ValueError("need 0 < ambiguous <= dominant < 1")
        self.dominant = dominant
        self.ambiguous = ambiguous
        self._wn = wordnet if wordnet is not None else load_wordnet()
        self._share = lru_cache(maxsize=None)(self._compute_share)
        self._similarity = lru_cache(maxsize=None)(self._compute_similarity)
        self._sense_counts: dict[str, int] | None = None

    @classmethod
    def load(cls, path: str | None = None) -> NounLexicon:
        """The lexicon on the local WordNet, one per process (its decisions are cached as they are made);
        :class:`core.wordnet.WordNetMissing` when there is no WordNet."""
        return _shared_lexicon(str(path or ""))

    def version(self) -> str:
        return f"wordnet-nouns(dominant={self.dominant},ambiguous={self.ambiguous},stop={len(STOP_WORDS)})"

    def noun_share(self, word: str) -> float:
        """Share of the word's tagged uses (or senses) that are noun senses; 0 for a non-noun."""
        return self._share(word.lower())

    def is_noun(self, word: str) -> bool:
        return self.noun_share(word) > self.dominant

    def is_ambiguous_noun(self, word: str) -> bool:
        return self.ambiguous <= self.noun_share(word) <= self.dominant

    def lemmas(self, word: str) -> frozenset[str]:
        """The word and its noun base forms ("cars" -> {"cars", "car"})."""
        word = word.lower()
        return frozenset([word, *self._wn._morphy(word, "n")])

    def lemma(self, word: str) -> str:
        """The noun base form WordNet prefers, else the word itself."""
        word = word.lower()
        return self._wn.morphy(word, "n") or word

    def is_plural(self, word: str) -> bool:
        word = word.lower()
        if word in _PLURAL_ONLY or any(base != word for base in self._wn._exception_map["n"].get(word, ())):
            return True
        if not word.endswith("s") or word.endswith("ss"):
            return False
        return any(base != word for base in self._wn._morphy(word, "n"))

    def similarity(self, a: str, b: str) -> float:
        """WordNet path similarity of the two nouns' most frequent senses (the first two of each)."""
        first, second = sorted((self.lemma(a), self.lemma(b)))
        return self._similarity(first, second)

    def _compute_share(self, word: str) -> float:
        if word in STOP_WORDS or len(word) < 2 or not word.replace("-", "").replace("'", "").isalpha():
            return 0.0
        wn = self._wn
        noun_base = wn.morphy(word, "n")
        if noun_base is None:
            return 0.0
        nouns = wn.lemmas(noun_base, "n")
        if not nouns or all(lemma.name()[0].isupper() for lemma in nouns):
            return 0.0
        tagged = {"n": self._tagged(nouns)}
        senses = {"n": len(nouns)}
        for pos in ("v", "a", "r"):
            base = wn.morphy(word, pos)
            if base is None:
                continue
            lemmas = wn.lemmas(base, pos)  # "a" includes the adjective satellites
            tagged[pos] = self._tagged(lemmas)
            senses[pos] = len(lemmas)
        total = sum(tagged.values())
        if total > 0:
            return tagged["n"] / total
        return senses["n"] / sum(senses.values())

    def _tagged(self, lemmas) -> int:
        """Sum of ``lemma.count()``, from WordNet's cntlist.rev read once: nltk binary-searches the
        file for every lemma, which makes a vocabulary of 10k words take tens of seconds."""
        if self._sense_counts is None:
            counts = {}
            with self._wn.open("cntlist.rev") as lines:
                for line in lines:
                    key, _, count = line.split()
                    counts[key] = int(count)
            self._sense_counts = counts
        return sum(self._sense_counts.get(lemma.key(), 0) for lemma in lemmas)

    def _compute_similarity(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        first = self._wn.synsets(a, "n")[:2]
        second = self._wn.synsets(b, "n")[:2]
        scores = [x.path_similarity(y) or 0.0 for x in first for y in second]
        return max(scores, default=0.0)


@lru_cache(maxsize=2)
def _shared_lexicon(path: str) -> NounLexicon:
    return NounLexicon(wordnet=load_wordnet(path or None))
