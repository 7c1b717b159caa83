"""English verb forms for the rules that move or remove an auxiliary ("She went" <-> "Did she go").

An irregular-verb table plus the regular -s/-ed spelling rules. WordNet (optional, through
``core.wordnet``) answers whether a word is a verb at all and undoes regular inflections; without
it only the table's verbs and ``COMMON_VERBS`` are known, so the rules skip more, never guess more.
"""

from __future__ import annotations

import re
from functools import lru_cache

# base past participle; "/" separates variants, the first is the one produced.
_IRREGULAR = """
arise arose arisen|awake awoke awoken|be was been|bear bore born|beat beat beaten|become became become
begin began begun|bend bent bent|bet bet bet|bind bound bound|bite bit bitten|bleed bled bled
blow blew blown|break broke broken|bring brought brought|build built built|burn burnt/burned burnt/burned
burst burst burst|buy bought bought|catch caught caught|choose chose chosen|come came come|cost cost cost
creep crept crept|cut cut cut|deal dealt dealt|dig dug dug|do did done|draw drew drawn
dream dreamt/dreamed dreamt/dreamed|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen
feed fed fed|feel felt felt|fight fought fought|find found found|flee fled fled|fly flew flown
forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen
get got got/gotten|give gave given|go went gone|grow grew grown|hang hung hung|have had had|hear heard heard
hide hid hidden|hit hit hit|hold held held|hurt hurt hurt|keep kept kept|kneel knelt knelt|know knew known
lay laid laid|lead led led|lean leant/leaned leant/leaned|learn learnt/learned learnt/learned|leave left left
lend lent lent|let let let|lie lay lain|light lit lit|lose lost lost|make made made|mean meant meant
meet met met|mistake mistook mistaken|overcome overcame overcome|pay paid paid|prove proved proven/proved
put put put|quit quit quit|read read read|ride rode ridden|ring rang rung|rise rose risen|run ran run
say said said|see saw seen|seek sought sought|sell sold sold|send sent sent|set set set|shake shook shaken
shine shone shone|shoot shot shot|show showed shown|shrink shrank shrunk|shut shut shut|sing sang sung
sink sank sunk|sit sat sat|sleep slept slept|slide slid slid|smell smelt/smelled smelt/smelled
speak spoke spoken|speed sped sped|spell spelt/spelled spelt/spelled|spend spent spent|spill spilt/spilled spilt/spilled
spin spun spun|split split split|spread spread spread|stand stood stood|steal stole stolen|stick stuck stuck
sting stung stung|strike struck struck|swear swore sworn|sweep swept swept|swim swam swum|swing swung swung
take took taken|teach taught taught|tear tore torn|tell told told|think thought thought|throw threw thrown
understand understood understood|upset upset upset|wake woke woken|wear wore worn|win won won
withdraw withdrew withdrawn|write wrote written
"""


def _parse_irregular() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    table = {}
    for entry in _IRREGULAR.replace("\n", "|").split("|"):
        if entry.strip():
            base, past, participle = entry.split()
            table[base] = (tuple(past.split("/")), tuple(participle.split("/")))
    return table


IRREGULAR = _parse_irregular()
PAST_TO_BASE = {past: base for base, (pasts, _) in IRREGULAR.items() for past in pasts}
PARTICIPLE_TO_BASE = {pp: base for base, (_, pps) in IRREGULAR.items() for pp in pps}
# Past forms that are also the base of another common verb ("I lay down", "they ground it"); the
# others ("found", "saw") are read as pasts, by far their more frequent use in dialogue.
AMBIGUOUS_PAST = frozenset({"lay", "ground", "wound"})
# Same form in base and past ("put", "cut"): past after a 3rd-person singular subject only.
SAME_BASE_AND_PAST = frozenset(base for base, (pasts, _) in IRREGULAR.items() if base in pasts)
IRREGULAR_THIRD_PERSON = {"have": "has", "do": "does", "go": "goes", "be": "is"}
_THIRD_PERSON_TO_BASE = {v: k for k, v in IRREGULAR_THIRD_PERSON.items()}

# Known verbs when WordNet is missing: the most frequent lexical verbs of dialogue.
COMMON_VERBS = frozenset(IRREGULAR) | frozenset(
    """
    like love want need hope wish try ask answer call help work live look seem sound play watch
    enjoy agree believe decide happen remember miss change use start stop finish open close move
    visit wait walk talk travel listen learn study plan prefer suppose guess mean worry cook clean
    order book check pass stay turn return arrive expect hate mind care suggest offer accept
    receive explain save own appear
    """.split()
)

_VOWELS = "aeiou"
# Verbs of more than one syllable that double their last consonant (stress on the last syllable).
_DOUBLING = frozenset(
    "admit commit permit submit omit emit regret prefer refer occur control patrol equip upset".split()
)


@lru_cache(maxsize=1)
def _wordnet():
    from core.wordnet import load_wordnet, wordnet_available

    return load_wordnet() if wordnet_available() else None


def lexicon_version() -> str:
    """Part of the rules' versions: without WordNet they know fewer verbs and edit less."""
    return "verbs-1+wordnet" if _wordnet() is not None else "verbs-1"


def is_verb_lemma(word: str) -> bool:
    word = word.lower()
    if word in COMMON_VERBS:
        return True
    wordnet = _wordnet()
    return bool(wordnet and wordnet.synsets(word, pos="v") and wordnet.morphy(word, "v") == word)


def _wordnet_lemma(word: str) -> str | None:
    wordnet = _wordnet()
    if wordnet is None:
        return None
    lemma = wordnet.morphy(word, "v")
    return lemma if lemma and lemma != word else None


def _regular_lemma(word: str, suffix: str) -> str | None:
    """``word`` without its regular ``-s``/``-ed`` when the result is a known verb."""
    if not word.endswith(suffix):
        return None
    if suffix == "ed":
        stem = word[:-2]
        candidates = [stem + "e", stem]
        if stem.endswith("i"):
            candidates.insert(0, stem[:-1] + "y")
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
            candidates.insert(0, stem[:-1])
    else:
        stem = word[:-1]
        candidates = [stem]
        if word.endswith("ies"):
            candidates.insert(0, word[:-3] + "y")
        elif word.endswith("es"):
            candidates.insert(0, word[:-2])
    for candidate in candidates:
        if candidate in COMMON_VERBS:
            return candidate
    lemma = _wordnet_lemma(word)
    return lemma if lemma in candidates else None


def analyse(word: str) -> tuple[str, str] | None:
    """``(lemma, form)`` of a lexical verb form, form one of "base", "3sg", "past", "base_or_past";
    None when the word is not known as a verb form."""
    word = word.lower()
    if word in SAME_BASE_AND_PAST:
        return word, "base_or_past"
    if word in PAST_TO_BASE:
        if word in AMBIGUOUS_PAST and is_verb_lemma(word):
            return None
        return PAST_TO_BASE[word], "past"
    if word in _THIRD_PERSON_TO_BASE:
        return _THIRD_PERSON_TO_BASE[word], "3sg"
    if is_verb_lemma(word):
        return word, "base"
    if lemma := _regular_lemma(word, "ed"):
        return lemma, "past"
    if lemma := _regular_lemma(word, "s"):
        return lemma, "3sg"
    return None


def is_past_participle(word: str) -> bool:
    word = word.lower()
    if word in PARTICIPLE_TO_BASE:
        return True
    return _regular_lemma(word, "ed") is not None


def third_person(base: str) -> str:
    if base in IRREGULAR_THIRD_PERSON:
        return IRREGULAR_THIRD_PERSON[base]
    if re.search(r"(s|sh|ch|x|z|o)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


def past(base: str) -> str | None:
    """The simple past, or None where the spelling is uncertain (travel: traveled/travelled)."""
    if base in IRREGULAR:
        return IRREGULAR[base][0][0]
    if base.endswith("e"):
        return base + "d"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ied"
    if re.search(r"[^aeiou][aeiou][^aeiouwxy]$", base):
        syllables = len(re.findall(r"[aeiouy]+", base))
        if syllables == 1 or base in _DOUBLING:
            return base + base[-1] + "ed"
        if base.endswith(("el", "al")):
            return None
    return base + "ed"
