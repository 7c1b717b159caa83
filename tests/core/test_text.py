import pytest

from core.text import clean_text, count_tokens, normalize_text, strip_formatting_tags, text_hash, unstorable_character


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Say , Jim , how about going for a few beers ?", "Say, Jim, how about going for a few beers?"),
        ("I ’ ll see you there .", "I'll see you there."),
        ("don ' t worry", "Don't worry!"),
        ("<i>I told you so.</i>", "I told you so"),
        ("Ｆｕｌｌ width", "full WIDTH"),
    ],
)
def test_texts_that_differ_only_in_form_share_a_hash(a, b):
    # given two renderings of the same utterance (tokenised corpus vs subtitles)
    # then they normalise to the same hash
    assert text_hash(a) == text_hash(b)


def test_different_words_give_different_hashes():
    assert text_hash("I will go.") != text_hash("I will not go.")


def test_punctuation_only_text_keeps_a_distinct_normal_form():
    # given texts without any word character
    # then each keeps its own non-empty normal form
    assert normalize_text("...") == "..."
    assert text_hash("...") != text_hash("?!")


def test_only_formatting_tags_are_stripped():
    # given subtitle formatting and markup that is not formatting
    text = '<font color="red">Run</font> <script>alert(1)</script>'
    # then formatting tags go, everything else stays literal text
    assert strip_formatting_tags(text) == "Run <script>alert(1)</script>"


def test_clean_text_collapses_all_whitespace_including_tabs_and_carriage_returns():
    assert clean_text("  a\tb\r\nc\u2028d  ") == "a b c d"


def test_count_tokens_counts_words_not_punctuation():
    assert count_tokens("Say , Jim , how about ... ?") == 4


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("plain text", None),
        ("émoji 😀 and 中文", None),
        ("two\x00words", "holds a NUL character (U+0000) at character 4"),
        ("lone \ud800", "holds a lone surrogate (U+D800) at character 6"),
        ("\udfff", "holds a lone surrogate (U+DFFF) at character 1"),
    ],
)
def test_text_that_cannot_be_stored_as_written_is_found(text, problem):
    found = unstorable_character(text)
    assert (found if found is None else found[: len(problem)]) == problem
