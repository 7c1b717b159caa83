"""The test double's crude English analysis (tests/retrieval/es_double.py): lower case, words,
stop words (Elasticsearch's _english_ list) and suffix stripping, close enough to the english
analyzer for BM25 rankings of short utterances."""

import re

STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves
""".split()
)
TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*")
POSSESSIVE = re.compile(r"['\u2019]s$")


def stem(token: str) -> str:
    """Crude suffix stripping: trains/train, leaves/leave, loved/love meet on one stem."""
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3 and not token.endswith("ss"):
            token = token[: -len(suffix)]
            break
    return token[:-1] if token.endswith("e") and len(token) > 3 else token


def analyze(text: str, stop_words: frozenset[str] = STOP_WORDS) -> list[str]:
    tokens = (POSSESSIVE.sub("", token) for token in TOKEN.findall(text.lower()))
    return [stem(token) for token in tokens if token not in stop_words]
