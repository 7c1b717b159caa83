"""Function-word pairs: one preposition or phrasal-verb particle replaced by one that reverses the
role of its noun phrase ("going to the bank" -> "going from the bank", "turn it on" -> "turn it off").

No tagger: the tables below name the words and, for particles, the verbs whose opposite particle
gives another real phrasal verb ("pick up" -> "pick down" does not exist, so "pick" is not listed).
Each preposition has a context check, because most of their uses are idiomatic or governed by a verb
("listen to", "different from"); a use that passes none of the checks is not edited.

Which edit: the candidate positions in reading order are shuffled with the caller's ``rng`` and the
first ``per_question`` are taken; where a word has several replacements, ``rng`` picks one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pairs.edits import Edit, EditRule, PairType, RuleOutcome
from pairs.rules import verbs
from pairs.text import Token, splice, tokens

PREPOSITION = "preposition"
PARTICLE = "particle"

# Preposition -> replacements that reverse direction, order or presence. Left out on purpose: "in",
# "on", "at", "for", "by", "of": their uses are mostly temporal or verb-governed ("in the morning",
# "on Monday", "wait for"), where a swap is ungrammatical rather than wrong.
PREPOSITION_SWAPS: dict[str, tuple[str, ...]] = {
    "to": ("from",),
    "from": ("to",),
    "into": ("out of",),
    "out of": ("into",),
    "before": ("after",),
    "after": ("before",),
    "with": ("without",),
    "without": ("with",),
    "above": ("below", "under"),
    "below": ("above", "over"),
    "inside": ("outside",),
    "outside": ("inside",),
    "behind": ("in front of",),
    "in front of": ("behind",),
    "near": ("far from", "away from"),
    "over": ("under",),  # before a number only: "over 50 people"
    "under": ("over",),  # idem
}

_UP_DOWN = (
    "turn go come climb sit stand get walk run move jump put set bring shut write hang break back cut step pull "
    "push roll scale dress wind close keep"
)
_ON_OFF = "turn switch get log sign hop jump step fall"
_IN_OUT = "come go get move check log sign walk let eat stay lock pull bring hand drop take put"
# Of the in/out verbs, those that take an object between verb and particle ("let it out"); "check
# it out" means "look at it", not the opposite of "check in".
_IN_OUT_TRANSITIVE = frozenset("let lock pull bring hand drop take put".split())
# Particle -> (replacement, verbs with which both particles make a phrasal verb).
PARTICLE_SWAPS: dict[str, tuple[str, frozenset[str]]] = {
    "up": ("down", frozenset(_UP_DOWN.split())),
    "down": ("up", frozenset(_UP_DOWN.split())),
    "on": ("off", frozenset(_ON_OFF.split())),
    "off": ("on", frozenset(_ON_OFF.split())),
    "in": ("out", frozenset(_IN_OUT.split())),
    "out": ("in", frozenset(_IN_OUT.split())),
}

# Expressions whose function word is not a role marker; a candidate inside one is never edited.
FIXED_EXPRESSIONS: tuple[tuple[str, ...], ...] = tuple(
    tuple(e.split())
    for e in (
        "at least|of course|in fact|at all|on time|in time|after all|above all|all over|over there|over here|"
        "from now on|from time to time|with pleasure|without doubt|without saying|up to|next to|according to|"
        "due to|thanks to|used to|have to|has to|had to|ought to|in order to|so as to|forward to|face to face|"
        "in line with|come on|hold on|go on|goes on|going on|went on|carry on|on and off|up and down|in and out|"
        "out of order|out of stock|out of date|out of the question|out of control|out of work|out of breath|"
        "out of sight|out of mind|out of luck|out of shape|out of place|out of season|out of print|"
        "out of reach|out of fashion|out of style|out of practice|out of danger|out of curiosity|"
        "before long|what's up|s up|break up with|get on with|get on well|keep up with|get up to|"
        "from scratch|day after day|one after another|after you|with regard to|by the way|"
        "dress up|shut up|wind up|set up|put up with|cut down on|look up to|catch up|keep up|"
        "to hell with|over to|day after tomorrow|day before yesterday|be with you|in touch with"
    ).split("|")
)

# Verbs of movement after which "to"/"from" mark destination and origin. Not "get": "get to" is
# "arrive at", and "get from the hospital" lacks its destination.
MOTION_VERBS = frozenset(
    "go come move drive fly walk run travel return take bring ride head commute hurry rush sail "
    "swim carry transfer lead fly return escape".split()
)
# Nouns after which "to"/"from" mark destination/origin or addressee/sender ("a letter from Mary").
ROUTE_NOUNS = frozenset(
    "way road trip flight flights ticket tickets train bus journey route directions letter letters "
    "message messages gift gifts present call email e-mail note card postcard visit".split()
)
NOUN_PHRASE_STARTS = frozenset(
    "the a an my your his her our their its this that these those me him us them you it some another every each".split()
)
PLACE_NOUNS = frozenset("school work church town class college university hospital market".split())
TIME_NOUNS = frozenset(
    "lunch dinner breakfast supper work school class midnight noon dark christmas tomorrow tonight today "
    "monday tuesday wednesday thursday friday saturday sunday graduation".split()
)
NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten twenty thirty fifty hundred".split())
# Verbs and adjectives that govern "with"/"into"/"from" idiomatically ("agree with", "look into").
WITH_GOVERNORS = frozenset(
    "agree deal cope wrong matter familiar compare connect disagree argue help provide supply fill cover "
    "share mess fed along start begin end finish do compete communicate interfere associate acquaint "
    "equip charge trouble problem concerned careful busy up what's same link involve cooperate collaborate "
    "talk speak chat meet marry identical similar touch right ok okay fine get got".split()
)
# "named after", "look after", "takes after" (inflected forms listed: WordNet is optional)
AFTER_GOVERNORS = frozenset(
    "name names named naming look looks looked looking take takes took taking ask asked".split()
)
INTO_GOVERNORS = frozenset("turn look run translate change divide cut split convert bump crash talk check grow".split())
BE_FORMS = frozenset("be is are am was were been being 's 're 'm s re m".split())
FROM_GOVERNORS = frozenset("different apart far aside away".split())
_ADVERBS_AFTER_PARTICLE = frozenset(
    "now here there soon again today tonight tomorrow please and at for to early late first quickly "
    "together yet alone".split()
)


def _lemma(word: str) -> str:
    analysis = verbs.analyse(word)
    if analysis:
        return analysis[0]
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        for candidate in (stem, stem + "e", stem[:-1]):
            if verbs.is_verb_lemma(candidate):
                return candidate
    return word


def _case_like(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


class FunctionWordRule(EditRule):
    type = PairType.FUNCTION

    def version(self) -> str:
        return f"FunctionWordRule-2/{verbs.lexicon_version()}"

    def propose(
        self, *, context: Sequence[str], response: str, rng: random.Random, per_question: int = 1
    ) -> RuleOutcome:
        words = [t for t in tokens(response) if t.is_word]
        candidates, rejections = _candidates(words)
        if not candidates:
            return RuleOutcome(edits=[], skipped=_skip_reason(rejections))
        rng.shuffle(candidates)
        edits = []
        for subtype, first, last, replacements, verb in candidates[:per_question]:
            original = response[words[first].start : words[last].end]
            replacement = _case_like(original, rng.choice(replacements))
            incorrect, incorrect_span = splice(response, words[first].start, words[last].end, replacement)
            details = {"word": original, "replacement": replacement, "rule": subtype}
            if verb:
                details["verb"] = verb
            span = (words[first].start, words[last].end)
            edits.append(Edit(PairType.FUNCTION, subtype, incorrect, span, incorrect_span, details=details))
        return RuleOutcome(edits=edits)


def _skip_reason(rejections: list[str]) -> str:
    if not rejections:
        return "no_function_word"
    if all(r == "fixed_expression" for r in rejections):
        return "fixed_expression_only"
    if all(r == "infinitive" for r in rejections):
        return "infinitive_only"
    return "unsafe_context"


def _in_fixed_expression(lower: list[str], i: int) -> bool:
    for expression in FIXED_EXPRESSIONS:
        n = len(expression)
        for start in range(max(0, i - n + 1), i + 1):
            if tuple(lower[start : start + n]) == expression:
                return True
    return False


def _complement_of_participle(lower: list[str], i: int, source: str) -> bool:
    """ "with" after an adjectival participle is its fixed complement ("satisfied with", "infatuated
    with", "filled with"): "without" there is no English."""
    return source == "with" and i > 0 and len(lower[i - 1]) > 4 and lower[i - 1].endswith("ed")


def _candidates(words: list[Token]) -> tuple[list[tuple], list[str]]:
    """(subtype, first word, last word, replacements, verb) for each safe position, and the reason
    each other table word was rejected."""
    lower = [w.lower.replace("’", "'") for w in words]
    candidates, rejections = [], []
    i = 0
    while i < len(lower):
        length, source = 1, lower[i]
        if lower[i : i + 2] == ["out", "of"]:
            length, source = 2, "out of"
        elif lower[i : i + 3] == ["in", "front", "of"]:
            length, source = 3, "in front of"
        if source in PREPOSITION_SWAPS or source in PARTICLE_SWAPS:
            if _in_fixed_expression(lower, i) or _complement_of_participle(lower, i, source):
                rejections.append("fixed_expression")
            else:
                found, reason = _classify(words, lower, i, length, source)
                if found:
                    candidates.append((found[0], i, i + length - 1, found[1], found[2]))
                else:
                    rejections.append(reason)
        i += length
    return candidates, rejections


def _classify(words: list[Token], lower: list[str], i: int, length: int, source: str):
    """((subtype, replacements, verb), "") for a safe use, (None, reason) otherwise."""
    prev = lower[i - 1] if i > 0 else ""
    after = i + length
    nxt = lower[after] if after < len(lower) else ""
    adjacent = after < len(words) and _adjacent(words, after - 1, after)
    if source in PARTICLE_SWAPS:
        has_object = prev in ("it", "them", "him", "her", "me", "us", "this", "that")
        verb_at = i - 2 if has_object else i - 1
        verb = _lemma(lower[verb_at]) if verb_at >= 0 else ""
        replacement, verb_table = PARTICLE_SWAPS[source]
        if verb not in verb_table or (source == "out" and nxt == "of"):
            return None, "unsafe_context"
        if source in ("in", "out") and has_object and verb not in _IN_OUT_TRANSITIVE:
            return None, "unsafe_context"
        if source in ("in", "out") and adjacent and nxt not in _ADVERBS_AFTER_PARTICLE:
            return None, "unsafe_context"  # "get in the car" -> "get out the car" needs "of"
        return (PARTICLE, (replacement,), verb), ""
    if not nxt or not adjacent:
        return None, "unsafe_context"  # adverbial use at the end of a clause ("I've been there before")
    subject_pronoun = nxt in ("i", "he", "she", "we", "they")  # a clause follows: a subordinator
    starts_noun_phrase = not subject_pronoun and (
        nxt in NOUN_PHRASE_STARTS or nxt[:1].isdigit() or words[after].text[:1].isupper()
    )
    ok = False
    if source in ("to", "from"):
        if source == "to" and not starts_noun_phrase and nxt not in PLACE_NOUNS:
            return None, "infinitive" if verbs.analyse(nxt) else "unsafe_context"
        before = [_lemma(w) for w in lower[max(0, i - 3) : i]]
        motion = any(w in MOTION_VERBS for w in before) or prev in ROUTE_NOUNS
        in_range = "from" in lower[max(0, i - 4) : i] if source == "to" else "to" in lower[after : after + 4]
        ok = (starts_noun_phrase or nxt in PLACE_NOUNS) and motion and not in_range and prev not in FROM_GOVERNORS
    elif source in ("into", "out of"):
        governed = any(_lemma(w) in INTO_GOVERNORS for w in lower[max(0, i - 3) : i])
        # "one out of ten"; "it's out of paper" (be out of: run short) -> "it's into paper"
        governed = governed or prev in NUMBER_WORDS or prev[:1].isdigit() or (source == "out of" and _is_be(prev))
        ok = not governed
    elif source in ("before", "after"):
        clause = nxt in ("you", "it") and after + 1 < len(lower) and words[after + 1].is_word
        governed = source == "after" and (prev in AFTER_GOVERNORS or _lemma(prev) in AFTER_GOVERNORS)
        ok = (starts_noun_phrase or nxt in TIME_NOUNS or nxt.endswith("ing")) and not clause and not governed
    elif source == "with":
        number = nxt[:1].isdigit() or nxt in NUMBER_WORDS
        governed = any(w in WITH_GOVERNORS or _lemma(w) in WITH_GOVERNORS for w in lower[max(0, i - 2) : i])
        ok = not governed and not number
    elif source == "without":
        ok = not nxt.endswith("ing")
    elif source in ("over", "under"):
        ok = nxt[:1].isdigit() or nxt in NUMBER_WORDS
    elif source in ("behind", "near"):
        ok = starts_noun_phrase and prev not in NOUN_PHRASE_STARTS
    else:  # above, below, inside, outside, in front of
        ok = True
    return ((PREPOSITION, PREPOSITION_SWAPS[source], ""), "") if ok else (None, "unsafe_context")


def _is_be(word: str) -> bool:
    return word in BE_FORMS or word.endswith(("'s", "'re", "'m"))


def _adjacent(words: list[Token], a: int, b: int) -> bool:
    """No punctuation between word tokens ``a`` and ``b`` (the word list has none of its own)."""
    return words[b].start - words[a].end <= 1
