import pytest

from core.errors import UserError
from core.normalisers import NORMALISERS, normaliser_get
from core.text import clean_text, text_hash
from testsets.shortcuts.features import SPACED_PUNCTUATION, SPLIT_CLITIC

detokenize, subtitles, standard = (NORMALISERS[name] for name in ("detokenize", "subtitles", "standard"))

# DailyDialog's own turns (test and train files) and Penn Treebank spellings, as tokenised.
DAILYDIALOG = [
    ("Hey man , you wanna buy some weed ?", "Hey man, you wanna buy some weed?"),
    (
        "Say , Jim , how about going for a few beers after dinner ?",
        "Say, Jim, how about going for a few beers after dinner?",
    ),
    ("I ’ ll even give you one ounce for free .", "I'll even give you one ounce for free."),
    ("Sounds good ! Let ’ s see , I want .", "Sounds good! Let's see, I want."),
    ("I ’ Ve got it . Don ' t worry .", "I've got it. Don't worry."),
    ("Well ... I see .", "Well... I see."),
    ("How about ... ?", "How about...?"),
    ("It's about 15 per cent ( roughly ) .", "It's about 15 per cent (roughly)."),
    ("It costs $ 100 , or 15 % off .", "It costs $100, or 15% off."),
    ("The train leaves at 10 : 30 .", "The train leaves at 10:30."),
    ('He said , " I am busy . " Then he left .', 'He said, "I am busy." Then he left.'),
    ("Be there at five o ’ clock , ma ’ am .", "Be there at five o'clock, ma'am."),
    ("We 're late ; John 's car broke down .", "We're late; John's car broke down."),
]


@pytest.mark.parametrize(("tokenised", "expected"), DAILYDIALOG)
def test_detokenize_writes_dailydialog_as_subtitles_are_written(tokenised, expected):
    assert detokenize.normalise(tokenised) == expected


@pytest.mark.parametrize(("tokenised", "_"), DAILYDIALOG)
def test_detokenize_keeps_the_hash_of_dailydialog_turns(tokenised, _):
    assert text_hash(detokenize.normalise(tokenised)) == text_hash(tokenised)


def test_detokenize_leaves_no_style_marker_the_audit_counts():
    after = [detokenize.normalise(tokenised) for tokenised, _ in DAILYDIALOG]
    assert not [t for t in after if SPACED_PUNCTUATION.search(t) or SPLIT_CLITIC.search(t)]


def test_detokenize_rejoins_penn_negations_which_the_hash_counts_as_a_word():
    # core.text keeps "n't" a word of its own: the rejoined text hashes as the subtitle spelling does
    assert detokenize.normalise("I do n't know , it is n't mine .") == "I don't know, it isn't mine."
    assert text_hash(detokenize.normalise("I do n't know")) == text_hash("I don't know")
    assert text_hash("I do n't know") != text_hash("I don't know")


@pytest.mark.parametrize(
    "text",
    [
        "I'm fine, thanks.",
        "We can not go.",  # "can not" is English as written
        "He said 'the best' and left.",  # a quotation, not a clitic
        "Rock - paper - scissors",
        'An odd " quote',
    ],
)
def test_detokenize_leaves_untokenised_and_ambiguous_text_as_it_is(text):
    assert detokenize.normalise(text) == text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<i>Where were you?</i>", "Where were you?"),
        ("{\\an8}Who's there?", "Who's there?"),
        ("- Hi. - Hello.", "Hi. Hello."),
        ("[DOOR SLAMS] Who's there?", "Who's there?"),
        ("(SIGHS) Fine.", "Fine."),
        ("- [GASPS] No!", "No!"),
        ("♪ All you need is love ♪", "All you need is love"),
        ("[LAUGHS]", ""),
        ("(to John) Come here.", "(to John) Come here."),  # said, not a sound
        ("It was cold [really cold].", "It was cold [really cold]."),  # not at the start
        ("-5 degrees outside.", "-5 degrees outside."),
        ("-- and stop calling me Shirley!", "-- and stop calling me Shirley!"),  # a screenplay's cut-off line
        ("I can! -- Stop it.", "I can! -- Stop it."),
    ],
)
def test_subtitles_strips_markup_and_nothing_else(raw, expected):
    assert subtitles.normalise(raw) == expected


@pytest.mark.parametrize("raw", ["<i>Where were you?</i>", "- Hi. - Hello.", "♪ La la ♪", "<b>I'm</b> home."])
def test_subtitles_keeps_the_hash_where_only_markup_goes(raw):
    assert text_hash(subtitles.normalise(raw)) == text_hash(raw)


def test_standard_strips_markup_then_undoes_tokenisation():
    assert standard.normalise("<i>- I ’ m here , OK ?</i>") == "I'm here, OK?"


def test_none_is_the_identity():
    text = "Say , Jim , <i>how</i> about ... ?"
    assert normaliser_get("none").normalise(text) == text and not normaliser_get("none").changes_text


def test_every_normaliser_has_a_name_and_a_version():
    assert {(n.name, n.version) for n in NORMALISERS.values()} == {
        ("none", 1),
        ("detokenize", 1),
        ("subtitles", 1),
        ("standard", 1),
    }


def test_an_unknown_normaliser_is_a_user_error_naming_the_choices():
    with pytest.raises(UserError, match="unknown normaliser 'penn'; expected one of none, detokenize, subtitles"):
        normaliser_get("penn")


def test_detokenize_on_the_dailydialog_test_file(shared_data):
    path = shared_data / "dailydialog" / "test" / "dialogues_test.txt"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    turns = [
        clean_text(turn)
        for line in path.read_text(encoding="utf-8").splitlines()
        for turn in line.split("__eou__")[:-1]
        if turn.strip()
    ]
    after = [detokenize.normalise(turn) for turn in turns]
    marked_before = sum(bool(SPACED_PUNCTUATION.search(t) or SPLIT_CLITIC.search(t)) for t in turns)
    marked_after = sum(bool(SPACED_PUNCTUATION.search(t) or SPLIT_CLITIC.search(t)) for t in after)
    # most turns are tokenised; after detokenize (almost) none carries a marker, and no hash moves
    assert marked_before > len(turns) * 0.9
    assert marked_after < len(turns) * 0.01
    assert [text_hash(t) for t in after] == [text_hash(t) for t in turns]
