"""Sentence-type pairs: one sentence of the response turned into a question or a statement, or its
polarity flipped (Okano et al.'s two most frequent end-of-sentence error subclasses).

"You are late." -> "Are you late?", "She went home." -> "Did she go home?", "Do you like it?" ->
"You like it.", "I like it" -> "I don't like it", "I don ’ t know ." -> "I know .". The clause
reader (:mod:`pairs.rules.clauses`) accepts only simple clauses; everything else is skipped with
its reason rather than edited.

Which edit: the candidates are every (sentence, subtype) the rule can make, in reading order; the
caller's ``rng`` shuffles them and the first is taken. With ``per_question`` > 1 the next ones
prefer subtypes not yet chosen, then any other candidate.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pairs.edits import Edit, EditRule, PairType, RuleOutcome
from pairs.rules import clauses, verbs
from pairs.rules.clauses import Clause, Unsupported
from pairs.rules.words import ABBREVIATIONS, Style, Word, is_capitalised, new_word, recase, render, sentence_words
from pairs.text import Token, sentences

DECLARATIVE_TO_INTERROGATIVE = "declarative_to_interrogative"
INTERROGATIVE_TO_DECLARATIVE = "interrogative_to_declarative"
AFFIRMATIVE_TO_NEGATIVE = "affirmative_to_negative"
NEGATIVE_TO_AFFIRMATIVE = "negative_to_affirmative"
SUBTYPES = (
    DECLARATIVE_TO_INTERROGATIVE,
    INTERROGATIVE_TO_DECLARATIVE,
    AFFIRMATIVE_TO_NEGATIVE,
    NEGATIVE_TO_AFFIRMATIVE,
)

NEGATED = {
    "do": "don't", "does": "doesn't", "did": "didn't", "is": "isn't", "are": "aren't", "was": "wasn't",
    "were": "weren't", "have": "haven't", "has": "hasn't", "had": "hadn't", "can": "can't",
    "could": "couldn't", "will": "won't", "would": "wouldn't", "shall": "shan't", "should": "shouldn't",
    "must": "mustn't",
}  # fmt: skip
QUOTES = frozenset({'"', "“", "”", "‘", "’", "'", "`"})
CLAUSE_BREAKS = frozenset({";", ":", "(", ")", "-", "–", "—", "/"})
TAG_WORDS = frozenset({"right", "ok", "okay", "eh", "huh", "yes", "no", "yeah"})


def split_sentences(text: str) -> list[list[Token]]:
    """:func:`pairs.text.sentences`, glued back where a period is not an end: "Mr . Smith",
    "p.m.", "6.5"."""
    merged: list[list[Token]] = []
    for group in sentences(text):
        if merged and _period_continues(merged[-1], group):
            merged[-1] = merged[-1] + group
        else:
            merged.append(list(group))
    return merged


def _period_continues(previous: list[Token], following: list[Token]) -> bool:
    if previous[-1].text != "." or len(previous) < 2:
        return False
    before, first = previous[-2], following[0]
    single_letter = len(before.text) == 1 and before.text.isalpha() and before.lower not in ("i", "a")
    return (
        first.start == previous[-1].end
        or (before.lower in ABBREVIATIONS and before.lower != "no")
        or single_letter
        or (before.text.isdigit() and first.text[:1].isdigit())
    )


def _ending(words: list[Word]) -> int:
    end = len(words)
    while end > 0 and words[end - 1].norm in (".", "?", "!"):
        end -= 1
    return end


def _check_sentence(words: list[Word], end: int) -> str:
    """The final punctuation ("" when none); raises for what no subtype handles."""
    w = clauses.norms(words)
    ending = "".join(w[end:])
    if end == 0:
        raise Unsupported("no_sentence")
    if "." in w[:end] or "?" in w[:end] or "!" in w[:end]:
        raise Unsupported("abbreviation")
    if any(x in QUOTES for x in w[:end]):
        raise Unsupported("quotation")
    if "!" in ending:
        raise Unsupported("exclamation")
    if ending not in ("", ".", "?"):
        raise Unsupported("unclear_ending")
    if any(x in CLAUSE_BREAKS for x in w[:end]):
        raise Unsupported("multiple_clauses")
    return ending


def _is_tag_question(words: list[Word], end: int) -> bool:
    w = clauses.norms(words)
    if "," not in w[:end]:
        return False
    tail = w[len(w[:end]) - w[:end][::-1].index(",") : end]
    return 0 < len(tail) <= 3 and (tail[0] in clauses.AUXILIARIES or tail[0] in TAG_WORDS)


def _assemble(words: list[Word], removed: set[int], inserted: dict[int, Word], replaced: dict[int, Word]):
    """``words`` less ``removed``, with ``inserted[i]`` before word i and ``replaced[i]`` for word i."""
    out = []
    for i, word in enumerate(words):
        if i in inserted:
            out.append(inserted[i])
        if i not in removed:
            out.append(replaced.get(i, word))
    if len(words) in inserted:
        out.append(inserted[len(words)])
    return out


def _set_ending(words: list[Word], end: int, mark: str, replaced: dict[int, Word], inserted: dict[int, Word]):
    if end < len(words):
        punctuation = words[end]
        replaced[end] = Word(norm=mark, text=mark, gap=punctuation.gap, index=punctuation.index)
    else:
        inserted[len(words)] = new_word(mark)


def _recase(original: list[Word], edited: list[Word], clause: Clause) -> list[Word]:
    """A new first word takes the sentence's capital; the old one loses it unless it is "I"."""
    if clause.start != 0 or not edited or edited[0] is original[0]:
        return edited
    capital = is_capitalised(original[0])
    out = [recase(edited[0], capital or edited[0].norm == "i")]
    for word in edited[1:]:
        out.append(recase(word, False) if word.index == 0 and word.norm != "i" and capital else word)
    return out


def _verb_for(tense: str, third: bool, lemma: str) -> str:
    if tense == "past":
        form = verbs.past(lemma)
        if form is None:
            raise Unsupported("ambiguous_verb")
        return form
    return verbs.third_person(lemma) if third else lemma


def to_question(words: list[Word], clause: Clause, end: int) -> list[Word]:
    removed: set[int] = set()
    replaced: dict[int, Word] = {}
    if clause.aux is not None:
        joined = clause.negation is not None and words[clause.negation].norm == "n't"
        if joined and clause.aux_form not in NEGATED:
            raise Unsupported("ambiguous_verb")
        aux = new_word(NEGATED[clause.aux_form] if joined else clause.aux_form)
        removed = {clause.aux, clause.negation} if joined else {clause.aux}
    else:
        aux = new_word("did" if clause.verb_tense == "past" else "does" if clause.third_person else "do")
        if words[clause.verb].norm != clause.verb_lemma:
            replaced[clause.verb] = new_word(clause.verb_lemma)
    inserted = {clause.start: aux}
    _set_ending(words, end, "?", replaced, inserted)
    return _recase(words, _assemble(words, removed, inserted, replaced), clause)


def to_statement(words: list[Word], clause: Clause, end: int) -> list[Word]:
    w = clauses.norms(words)
    if any(x in clauses.NEGATIVE_POLARITY for x in w[clause.start : clause.end]) and clause.negation is None:
        raise Unsupported("polarity_item")  # "Is there anything else?" -> "There is anything else."
    aux_index, negation = clause.aux, clause.negation
    removed = {aux_index} | ({negation} if negation is not None else set())
    replaced: dict[int, Word] = {}
    inserted: dict[int, Word] = {}
    subject_end = clause.subject[1]
    if clause.aux_form in clauses.DO and negation is None and clause.verb is not None:
        third = clause.aux_form == "does"
        form = _verb_for("past" if clause.aux_form == "did" else "present", third, clause.verb_lemma)
        if form != words[clause.verb].norm:
            replaced[clause.verb] = new_word(form)
    else:
        if negation is not None and clause.aux_form not in NEGATED:
            raise Unsupported("ambiguous_verb")
        inserted[subject_end] = new_word(NEGATED[clause.aux_form] if negation is not None else clause.aux_form)
    _set_ending(words, end, ".", replaced, inserted)
    return _recase(words, _assemble(words, removed, inserted, replaced), clause)


def _check_polarity(w: list[str], clause: Clause, items: frozenset[str]) -> None:
    if any(x in clauses.NEGATIVE_WORDS for x in w[clause.start : clause.end]):
        raise Unsupported("negative_word")
    if any(x in items for x in w[clause.start : clause.end]):
        raise Unsupported("polarity_item")


def to_negative(words: list[Word], clause: Clause) -> list[Word]:
    w = clauses.norms(words)
    _check_polarity(w, clause, clauses.POSITIVE_POLARITY)
    if any(w[k] == "not" and (k + 1 >= len(w) or not w[k + 1][:1].isalpha()) for k in range(clause.end)):
        raise Unsupported("negative_word")  # "I'm afraid not" -> "I'm not afraid not"
    removed: set[int] = set()
    replaced: dict[int, Word] = {}
    inserted: dict[int, Word] = {}
    if clause.aux is not None:
        aux = w[clause.aux]
        if aux in ("'ll", "'d", "'ve") or (aux == "'s" and clause.aux_form == "has"):
            replaced[clause.aux] = new_word(NEGATED[clause.aux_form])
        elif aux == "can":
            replaced[clause.aux] = new_word(words[clause.aux].text + "not")
        else:
            inserted[clause.aux + 1] = new_word("not")
    else:
        do = "did" if clause.verb_tense == "past" else "does" if clause.third_person else "do"
        inserted[clause.subject[1]] = new_word(NEGATED[do])
        if w[clause.verb] != clause.verb_lemma:
            replaced[clause.verb] = new_word(clause.verb_lemma)
    return _recase(words, _assemble(words, removed, inserted, replaced), clause)


def to_affirmative(words: list[Word], clause: Clause) -> list[Word]:
    w = clauses.norms(words)
    if any(x in clauses.NEGATIVE_POLARITY for x in w[clause.start : clause.end]) or "at all" in " ".join(w):
        raise Unsupported("polarity_item")
    removed = {clause.negation}
    replaced: dict[int, Word] = {}
    if clause.aux_form in clauses.DO:
        k = clause.negation + 1
        while k < clause.end and w[k] in clauses.PRE_VERB_ADVERBS:
            k += 1
        if k < clause.end and w[k][:1].isalpha():
            analysis = verbs.analyse(w[k])
            if not analysis or analysis[1] not in ("base", "base_or_past"):
                raise Unsupported("ambiguous_verb")
            tense = "past" if clause.aux_form == "did" else "present"
            form = _verb_for(tense, clause.aux_form == "does", analysis[0])
            removed.add(clause.aux)
            if form != w[k]:
                replaced[k] = new_word(form)
        else:
            replaced[clause.aux] = new_word(clause.aux_form)  # "I don't." -> "I do."
    elif w[clause.negation] == "n't":
        replaced[clause.aux] = new_word(clause.aux_form)
    return _recase(words, _assemble(words, removed, {}, replaced), clause)


def sentence_edits(words: list[Word]) -> list[tuple[str, str, list[Word]]]:
    """Every (subtype, rule, edited words) of one sentence; raises with the reason when there is none."""
    end = _ending(words)
    ending = _check_sentence(words, end)
    start = clauses.clause_start(words, end)
    if ending == "?":
        if _is_tag_question(words, end):
            raise Unsupported("tag_question")
        clause = clauses.question(words, start, end)
        rule = "do_removal" if clause.aux_form in clauses.DO and clause.verb is not None else "aux_uninversion"
        return [(INTERROGATIVE_TO_DECLARATIVE, rule, to_statement(words, clause, end))]
    clause = clauses.declarative(words, start, end)
    w = clauses.norms(words)
    lexical = clause.aux is None
    attempts = []
    if "," in w[clause.subject[1] : end] or _coordinated(w, clause.subject[1], end):
        attempts.append((DECLARATIVE_TO_INTERROGATIVE, "", lambda: _raise("multiple_clauses")))
    else:
        rule = "do_support" if lexical else "aux_inversion"
        attempts.append((DECLARATIVE_TO_INTERROGATIVE, rule, lambda: to_question(words, clause, end)))
    if clause.negation is None:
        rule = "do_support" if lexical else "not_insertion"
        attempts.append((AFFIRMATIVE_TO_NEGATIVE, rule, lambda: to_negative(words, clause)))
    else:
        rule = "do_removal" if clause.aux_form in clauses.DO else "not_removal"
        attempts.append((NEGATIVE_TO_AFFIRMATIVE, rule, lambda: to_affirmative(words, clause)))
    edits, reasons = [], []
    for subtype, rule, attempt in attempts:
        try:
            edits.append((subtype, rule, attempt()))
        except Unsupported as skip:
            reasons.append(skip.reason)
    if not edits:
        raise Unsupported(reasons[0])
    return edits


def _coordinated(w: list[str], start: int, end: int) -> bool:
    """A second clause after a conjunction ("I like it and she likes it", "my father is a teacher
    and my mother is a worker"): a question of the first half alone would be ungrammatical."""
    for k in range(start, end - 1):
        if w[k] not in clauses.CONJUNCTIONS:
            continue
        if w[k + 1] in clauses.SUBJECT_PRONOUNS - {"it", "that", "this"}:
            return True
        # a determiner's noun phrase of up to three words, then a finite auxiliary: its own subject
        if w[k + 1] in clauses.DETERMINERS - {"a", "an"} and any(
            w[j] in clauses.AUXILIARIES for j in range(k + 2, min(k + 5, end))
        ):
            return True
    return False


def _raise(reason: str):
    raise Unsupported(reason)


def _changed_region(original: list[Word], edited: list[Word], before: list, after: list) -> tuple[int, int, int, int]:
    """Word ranges [a0, a1) of ``original`` and [b0, b1) of ``edited`` outside which both agree,
    gaps included; never empty on the original side."""

    def gap(spans, k):
        return spans[k][0] - spans[k - 1][1] if k > 0 else 0

    def same(i, j):
        a, b = original[i], edited[j]
        return b.index == a.index and b.text == a.text and gap(before, i) == gap(after, j)

    limit = min(len(original), len(edited))
    p = 0
    while p < limit and same(p, p):
        p += 1
    q = 0
    while q < limit - p and same(len(original) - 1 - q, len(edited) - 1 - q):
        q += 1
    if len(original) - q == p or len(edited) - q == p:  # a pure insertion or deletion: add a neighbour
        p, q = (p - 1, q) if p > 0 else (p, q - 1)
    while p > 0 and gap(before, p) != gap(after, p):
        p -= 1
    return p, len(original) - q, p, len(edited) - q


class SentenceTypeRule(EditRule):
    type = PairType.SENTENCE

    def version(self) -> str:
        return f"SentenceTypeRule-2/{verbs.lexicon_version()}"

    def propose(
        self, *, context: Sequence[str], response: str, rng: random.Random, per_question: int = 1
    ) -> RuleOutcome:
        style = Style.of(response)
        candidates: list[Edit] = []
        reasons: list[str] = []
        for tokens in split_sentences(response):
            words = sentence_words(response, tokens)
            try:
                options = sentence_edits(words)
            except Unsupported as skip:
                reasons.append(skip.reason)
                continue
            for subtype, rule, edited in options:
                candidates.append(self._edit(response, tokens[0].start, words, edited, style, subtype, rule))
        if not candidates:
            return RuleOutcome(edits=[], skipped=reasons[0] if reasons else "no_sentence")
        rng.shuffle(candidates)
        chosen: list[Edit] = []
        for edit in candidates:
            if edit.subtype not in {c.subtype for c in chosen}:
                chosen.append(edit)
        chosen += [edit for edit in candidates if edit not in chosen]
        return RuleOutcome(edits=chosen[:per_question])

    @staticmethod
    def _edit(
        response: str, offset: int, words: list[Word], edited: list[Word], style: Style, subtype: str, rule: str
    ) -> Edit:
        original_text, before = render(words, style)
        edited_text, after = render(edited, style)
        assert response[offset : offset + len(original_text)] == original_text, "words must render back"
        a0, a1, b0, b1 = _changed_region(words, edited, before, after)
        span = (offset + before[a0][0], offset + before[a1 - 1][1])
        incorrect = response[:offset] + edited_text + response[offset + len(original_text) :]
        incorrect_span = (offset + after[b0][0], offset + after[b1 - 1][1])
        return Edit(
            type=PairType.SENTENCE,
            subtype=subtype,
            incorrect=incorrect,
            span=span,
            incorrect_span=incorrect_span,
            details={"sentence": original_text, "edited": edited_text, "rule": rule},
        )
