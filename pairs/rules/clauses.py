"""The main clause of a simple English sentence: subject, finite auxiliary or verb, negation.

A conservative reader, no tagger: it recognises "[prefix ,] subject [adverbs] verb-group ..." with
a pronoun or a short determiner phrase as subject, and yes/no questions "aux subject ...". Anything
else raises :class:`Unsupported` with the snake_case reason that the rule reports as its skip.
"""

from __future__ import annotations

from dataclasses import dataclass

from pairs.rules import verbs
from pairs.rules.words import PUNCTUATION, Word

SUBJECT_PRONOUNS = frozenset(
    "i you he she it we they this that these those there "
    "everyone everybody someone somebody everything something".split()
)
NON_THIRD_PERSON = frozenset("i you we they these those".split())
DEMONSTRATIVES = frozenset("this that these those".split())
DETERMINERS = frozenset("the a an my your his her our their its this that these those".split())
BE = {"am": "am", "is": "is", "are": "are", "was": "was", "were": "were", "'m": "am", "'re": "are"}
MODALS = {m: m for m in "can could will would shall should may might must".split()} | {"'ll": "will"}
HAVE = {"have": "have", "has": "has", "had": "had", "'ve": "have"}
DO = frozenset({"do", "does", "did"})
AUXILIARIES = frozenset(BE) | frozenset(MODALS) | frozenset(HAVE) | DO | {"'s", "'d"}
NEGATIONS = frozenset({"not", "n't"})
# Adverbs that may stand between the subject and the verb ("I really like it").
PRE_VERB_ADVERBS = frozenset(
    "also really just always usually often sometimes still only even actually certainly probably "
    "definitely all both already ever never hardly rarely seldom".split()
)
# Words that already make the clause negative: "not" added to them makes a double negative.
NEGATIVE_WORDS = frozenset("never nothing nobody none neither nor hardly rarely seldom no nowhere".split())
# Polarity items: "any" needs the negation ("I don't have any" -> "I have any" is broken), "some"
# and "already" resist it ("I'm hungry too" -> "I'm not hungry too").
NEGATIVE_POLARITY = frozenset("any anything anyone anybody anywhere either yet ever".split())
POSITIVE_POLARITY = frozenset("some something someone somebody somewhere already too".split())
# Sentence openers followed by a comma that the clause may follow ("Well , I think so .").
DISCOURSE_MARKERS = frozenset(
    "well oh yes yeah yep no nope ok okay sure actually anyway besides however now then so but and "
    "um umm uh ah hmm alright right fine sorry great good really honestly frankly unfortunately "
    "fortunately luckily hey look listen wow".split()
)
CONJUNCTIONS = frozenset("and but so or".split())
WH_WORDS = frozenset("what where when why who whom whose which how".split())
SUBORDINATORS = frozenset(
    "if when because although though while since as unless until after before once whether whenever wherever".split()
)
# Not part of a short noun phrase subject: function words end it.
CLOSED_CLASS = (
    SUBJECT_PRONOUNS
    | DETERMINERS
    | AUXILIARIES
    | NEGATIONS
    | WH_WORDS
    | SUBORDINATORS
    | CONJUNCTIONS
    | frozenset("of in on at to for with from by about than me him us them not".split())
)
_HAS_PARTICIPLES = frozenset({"been", "got", "gotten"})


class Unsupported(Exception):
    """The sentence is outside what the rule handles; ``args[0]`` is the skip reason."""

    @property
    def reason(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class Clause:
    start: int  # first word of the clause (after a "Well ," prefix)
    subject: tuple[int, int]  # [start, end) word indices
    end: int  # index of the final punctuation, len(words) without one
    aux: int | None = None  # the finite auxiliary, None when the verb is lexical
    aux_form: str = ""  # its full form: "am", "will", "had", "do"...
    negation: int | None = None  # "not" / "n't" after the auxiliary
    verb: int | None = None  # the lexical verb (with or after "do")
    verb_lemma: str = ""
    verb_tense: str = ""  # "present" or "past" for a lexical verb
    third_person: bool = False


def norms(words: list[Word]) -> list[str]:
    return [word.norm for word in words]


def clause_start(words: list[Word], end: int) -> int:
    """Index after discourse markers with their comma and a leading conjunction."""
    k = 0
    while k + 1 < end and words[k].norm in DISCOURSE_MARKERS and words[k + 1].norm == ",":
        k += 2
    if k < end and words[k].norm in CONJUNCTIONS:
        k += 1
    return k


def _skip_adverbs(w: list[str], k: int, end: int) -> int:
    while k < end and w[k] in PRE_VERB_ADVERBS:
        k += 1
    return k


def _after_aux(w: list[str], k: int, end: int) -> str:
    """The first word after an auxiliary at ``k``, past negation and adverbs ("" at the end)."""
    k += 1
    while k < end and (w[k] in NEGATIONS or w[k] in PRE_VERB_ADVERBS):
        k += 1
    return w[k] if k < end and w[k] not in PUNCTUATION else ""


def _auxiliary(w: list[str], k: int, end: int) -> tuple[str, str] | None:
    """(kind, full form) of an auxiliary at ``k``, None for a lexical verb; raises for "'d better"."""
    word, nxt = w[k], _after_aux(w, k, end)
    if word in BE:
        return "be", BE[word]
    if word == "'s":
        return ("have", "has") if nxt in _HAS_PARTICIPLES else ("be", "is")
    if word in MODALS:
        return "modal", MODALS[word]
    if word == "'d" or (word == "had" and nxt in ("better", "rather")):
        if nxt in ("better", "rather"):
            raise Unsupported("ambiguous_verb")
        is_participle = nxt and verbs.is_past_participle(nxt) and (verbs.analyse(nxt) or ("", ""))[1] != "base"
        return ("have", "had") if is_participle else ("modal", "would")
    if word in HAVE:
        if not nxt or nxt in _HAS_PARTICIPLES or verbs.is_past_participle(nxt):
            return "have", HAVE[word]
        if word == "'ve":
            raise Unsupported("ambiguous_verb")
        return None
    if word in DO:
        negated = k + 1 < end and w[k + 1] in NEGATIONS
        if negated or not nxt or (verbs.analyse(nxt) or ("", ""))[1] == "base":
            return "do", word
        return None
    return None


def _subject_end(words: list[Word], w: list[str], k: int, end: int) -> tuple[int, bool]:
    """End of the subject that starts at ``k`` and whether it is a pronoun.

    A determiner phrase ends at a full-form auxiliary ("The taxi drivers are"), tried first so
    that "That book is" is not read as "that" + "book"."""
    if w[k] in DETERMINERS:
        for j in range(k + 1, min(end, k + 5)):
            if w[j] in AUXILIARIES and j > k + 1 and not words[j].text.startswith(("'", "’")):
                return j, False
            if not w[j].isalpha() or w[j] in CLOSED_CLASS:
                break
    if w[k] in SUBJECT_PRONOUNS:
        return k + 1, True
    raise Unsupported("no_subject_verb")


def declarative(words: list[Word], start: int, end: int) -> Clause:
    w = norms(words)
    if start >= end:
        raise Unsupported("no_subject_verb")
    first = w[start]
    if first in WH_WORDS or first in SUBORDINATORS:
        raise Unsupported("subordinate_clause")
    if first in ("let's", "please") or (first in DO and start + 1 < end and w[start + 1] in NEGATIONS):
        raise Unsupported("imperative")
    if first not in SUBJECT_PRONOUNS and first not in DETERMINERS:
        analysis = verbs.analyse(first)
        raise Unsupported("imperative" if analysis and analysis[1] == "base" else "no_subject_verb")
    subject_end, pronoun = _subject_end(words, w, start, end)
    subject = w[start] if pronoun else ""
    k = _skip_adverbs(w, subject_end, end)
    if k >= end:
        raise Unsupported("no_subject_verb")
    if w[k] in AUXILIARIES:
        found = _auxiliary(w, k, end)
        if found:
            negation = k + 1 if k + 1 < end and w[k + 1] in NEGATIONS else None
            return Clause(start, (start, subject_end), end, aux=k, aux_form=found[1], negation=negation)
    if not pronoun:
        raise Unsupported("no_subject_verb")
    analysis = verbs.analyse(w[k])
    if analysis is None or not words[k].text.islower():
        raise Unsupported("no_subject_verb")
    lemma, form = analysis
    third = subject not in NON_THIRD_PERSON
    if form == "base" and not third:
        tense = "present"
    elif form == "3sg" and third:
        tense = "present"
    elif form == "past" or (form == "base_or_past" and third):
        tense = "past"
    else:
        raise Unsupported("ambiguous_verb")
    return Clause(start, (start, subject_end), end, verb=k, verb_lemma=lemma, verb_tense=tense, third_person=third)


def _question_subject_end(words: list[Word], w: list[str], k: int, end: int) -> int:
    if k >= end:
        raise Unsupported("no_subject_verb")
    if w[k] in SUBJECT_PRONOUNS:
        nxt = w[k + 1] if k + 1 < end else ""
        if w[k] in DEMONSTRATIVES and nxt and (verbs.is_verb_lemma(nxt) or nxt[:1].isalpha() and _is_noun(nxt)):
            raise Unsupported("no_subject_verb")  # "Is that book yours?": where the subject ends is unsure
        if w[k] in ("you", "we", "they") and nxt in ("guys", "two", "people", "folks", "both", "all"):
            raise Unsupported("no_subject_verb")
        return k + 1
    j = k
    while j < end and words[j].text[:1].isupper() and w[j].isalpha() and w[j] not in CLOSED_CLASS:
        j += 1  # a proper name: capitalised inside the sentence
    if j == k or j - k > 2:
        raise Unsupported("no_subject_verb")
    return j


def _is_noun(word: str) -> bool:
    wordnet = verbs._wordnet()
    return bool(wordnet and wordnet.synsets(word, pos="n")) and word not in (
        "right true ok okay so all really correct possible enough yours mine his hers ours theirs sure".split()
    )


def question(words: list[Word], start: int, end: int) -> Clause:
    """A yes/no question "aux subject ...?"; the verb after "do" is found for un-inverting."""
    w = norms(words)
    if start >= end:
        raise Unsupported("no_subject_verb")
    if w[start] in WH_WORDS:
        raise Unsupported("wh_question")
    if w[start] not in AUXILIARIES or w[start].startswith("'"):
        raise Unsupported("declarative_question" if w[start] in SUBJECT_PRONOUNS else "no_subject_verb")
    negation = start + 1 if start + 1 < end and w[start + 1] in NEGATIONS else None
    subject_start = start + 1 + (negation is not None)
    subject_end = _question_subject_end(words, w, subject_start, end)
    word = w[start]
    if word in DO and negation is None:
        k = _skip_adverbs(w, subject_end, end)
        if k < end and w[k][:1].isalpha():
            analysis = verbs.analyse(w[k])
            if not analysis or analysis[1] not in ("base", "base_or_past"):
                raise Unsupported("ambiguous_verb")
            return Clause(
                start, (subject_start, subject_end), end, aux=start, aux_form=word, verb=k, verb_lemma=analysis[0]
            )
        return Clause(start, (subject_start, subject_end), end, aux=start, aux_form=word)
    form = BE.get(word) or MODALS.get(word) or HAVE.get(word) or word
    return Clause(start, (subject_start, subject_end), end, aux=start, aux_form=form, negation=negation)
