"""The text the demo's toy models are trained on."""

from annotation.services.demo_texts import dailydialog_untokenize, demo_training_dialogues


def test_without_the_real_corpora_the_demo_dialogues_alone(settings, tmp_path):
    settings.WELLCHOSEN_SHARED_DATA = tmp_path
    texts = demo_training_dialogues(max_chars=10_000_000)
    assert texts.sources == {"demo dialogues": 40}
    assert texts.dialogues[0][0] == "Excuse me, do you have this jacket in a medium?" and len(texts.dialogues[0]) == 4


def test_dailydialog_train_follows_up_to_the_character_cap(settings, shared_data):
    settings.WELLCHOSEN_SHARED_DATA = shared_data
    texts = demo_training_dialogues(max_chars=50_000)
    assert texts.sources["demo dialogues"] == 40 and texts.sources["DailyDialog train"] > 10
    last = sum(len(turn) for turn in texts.dialogues[-1])
    assert 50_000 <= texts.chars < 50_000 + last  # the dialogue that crosses the cap is the last
    # DailyDialog's first dialogue, its spaces before punctuation gone
    assert texts.dialogues[40][0] == "Say, Jim, how about going for a few beers after dinner?"


def test_a_small_cap_keeps_the_first_demo_dialogues(settings, shared_data):
    settings.WELLCHOSEN_SHARED_DATA = shared_data
    texts = demo_training_dialogues(max_chars=500)
    assert list(texts.sources) == ["demo dialogues"] and 1 < len(texts.dialogues) < 40


def test_dailydialog_spacing_is_undone():
    assert dailydialog_untokenize("Good.Let ' s go now . ") == "Good.Let's go now."
    assert dailydialog_untokenize("I don't know , really !") == "I don't know, really!"
    assert dailydialog_untokenize("It costs 30 % more ( maybe ) .") == "It costs 30% more (maybe)."
