import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.text import clean_text, count_tokens, text_hash
from core.text_batch import clean_texts_tokens_and_hashes

# Characters around every rule of core.text: word characters, apostrophes (straight, curly, spaced),
# the backtick, whitespace of both kinds, tags, NUL, typographic punctuation and other non-ASCII.
CHARACTERS = list("aZ_7' .,-!?>`\t\r\x0b\x0c\x01<\x1c\x00") + list("\u2018\u2019\u201c\u201d\u2013\u2014\u2026é\u02bcﬁ")
lines = st.one_of(
    st.text(st.sampled_from(CHARACTERS), max_size=30).map(str.encode),
    st.binary(max_size=12).map(lambda data: data.replace(b"\n", b"")),
    st.none(),
)


@settings(max_examples=3000, deadline=None)
@given(block=st.lists(lines, max_size=10), utf8=st.booleans())
def test_the_lines_it_takes_get_the_values_of_clean_text_count_tokens_and_text_hash(block, utf8):
    # when a block of lines is normalised at once
    texts, tokens, hashes = clean_texts_tokens_and_hashes(block, utf8=utf8)
    # then each line it takes has the text, token count and hash of the one-line functions
    assert len(texts) == len(tokens) == len(hashes) == len(block)
    for line, text, n_tokens, digest in zip(block, texts, tokens, hashes, strict=True):
        if text is None:
            assert n_tokens is None and digest is None
            continue
        expected = clean_text(line.decode("utf-8"))
        assert (text, n_tokens, digest) == (expected, count_tokens(expected), text_hash(expected))


@pytest.mark.parametrize(
    ("line", "utf8", "taken"),
    [
        (b"Don't  go , Jim !", False, True),
        ("I ’ ll see you … tomorrow — ok?".encode(), True, True),
        ("I ’ ll see you".encode(), False, False),  # curly quotes only in UTF-8
        ("café".encode(), True, False),
        (b"<i>Run</i>", True, False),  # formatting tags: strip_formatting_tags decides
        (b"Two\x00words", True, False),  # NUL: the caller's error
        (None, True, False),  # an over-long line
    ],
)
def test_which_lines_it_takes(line, utf8, taken):
    texts, _, _ = clean_texts_tokens_and_hashes([line], utf8=utf8)
    assert (texts[0] is not None) == taken


def test_spaced_and_curly_apostrophes_meet_in_one_hash():
    # given the same utterance tokenised, with a curly apostrophe, and with a straight one
    texts, tokens, hashes = clean_texts_tokens_and_hashes(
        [b"don ' t worry .", "Don’t worry.".encode(), b"Don't worry!", b"..."], utf8=True
    )
    # then their hashes are one, while the token counts are those of the texts as written
    assert hashes[0] == hashes[1] == hashes[2] != hashes[3]
    assert tokens == [3, 3, 2, 0]
    assert texts[3] == "..."
