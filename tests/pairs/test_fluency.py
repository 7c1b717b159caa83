"""The fluency check holds back garbled edits before review: a reference LM that knows the text
finds a garbled incorrect response far less fluent than its correct one."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pairs.fluency import Fluency, ReferenceLM, pair_fluency
from pairs.models import Pair, Review
from tests.factories import PairFactory, PairSetFactory
from tests.tiny_models import TEXTS

CORRECT = "Sure, I will try again after dinner."
GARBLED = "Sure . will , again . dinner after ?"  # what an under-trained MLM made of such sentences
CLEAN = "Sure, I will try again after noon."  # one word for another the text knows


@pytest.fixture(scope="module")
def reference_lm_dir(tiny_gpt2_dir, tmp_path_factory):
    """The random tiny GPT-2 trained on the test texts until it knows them: a reference LM."""
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    model = GPT2LMHeadModel.from_pretrained(tiny_gpt2_dir)
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    sequences = [torch.tensor([[start, *tokenizer(t, add_special_tokens=False)["input_ids"]]]) for t in TEXTS]
    model.train()
    for _ in range(20):
        for ids in sequences:
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    folder = tmp_path_factory.mktemp("reference-lm")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_the_reference_lm_finds_the_garbled_edit_less_fluent(reference_lm_dir):
    garbled, clean = ReferenceLM(str(reference_lm_dir), device="cpu").fluency([(CORRECT, GARBLED), (CORRECT, CLEAN)])
    assert garbled.increase > clean.increase
    assert garbled.held_back()


def test_the_continuation_is_the_shared_tokens_after_the_edit():
    # start, "they", "do"/"are", "not", "keep", "." : losses[i] is the loss of ids[i + 1]
    correct = ([0, 11, 12, 13, 14, 15], [2.0, 1.0, 1.0, 2.0, 0.5])
    incorrect = ([0, 11, 22, 13, 14, 15], [2.0, 3.0, 1.5, 6.0, 0.5])
    fluency = pair_fluency(*correct, *incorrect)
    # "not keep ." follow the edit in both: (1.5 + 6.0 + 0.5) / 3 against (1.0 + 2.0 + 0.5) / 3
    assert fluency.continuation_increase == pytest.approx(1.5)
    # from the edited token on: 11.0 against 4.5 nats
    assert fluency.total_increase == pytest.approx(6.5)
    assert fluency.increase == pytest.approx(13.0 / 5 - 6.5 / 5)


def test_an_edit_at_the_end_has_no_continuation():
    fluency = pair_fluency([0, 11, 12], [2.0, 1.0], [0, 11, 12, 13], [2.0, 1.0, 4.0])
    assert fluency.continuation_increase == 0.0 and fluency.total_increase == pytest.approx(4.0)


def test_a_garbled_edit_is_held_back_before_review(db, reference_lm_dir, capsys):
    # given a pending pair with a garbled edit, a pending clean one and an accepted garbled one
    pair_set = PairSetFactory(name="fluent")
    garbled = PairFactory(pair_set=pair_set, correct=CORRECT, incorrect=GARBLED, review=Review.PENDING)
    accepted = PairFactory(pair_set=pair_set, correct=CORRECT, incorrect="Dinner , try will . again Sure ?")
    # when the check runs
    call_command("check_pair_fluency", "--set", "fluent", "--lm", str(reference_lm_dir), "--device", "cpu")
    # then the garbled pending pair is held back, with its losses, and no reviewer
    garbled.refresh_from_db()
    assert garbled.review == Review.REJECTED and garbled.reviewed_by is None
    fluency = garbled.provenance["fluency"]
    assert fluency["held_back"] and fluency["increase"] > fluency["max_increase"]
    assert fluency["total_increase"] > 0 and "continuation_increase" in fluency
    # and a pair a reviewer decided already is left as it is
    accepted.refresh_from_db()
    assert accepted.review == Review.ACCEPTED and "fluency" not in accepted.provenance
    assert '"held_back": 1' in capsys.readouterr().out


def test_a_pair_within_the_bar_stays_pending_with_its_losses(db, tiny_gpt2_dir, monkeypatch):
    monkeypatch.setattr(ReferenceLM, "fluency", lambda self, pairs: [Fluency(3.0, 3.4) for _ in pairs])
    pair = PairFactory(pair_set=PairSetFactory(name="fine"), review=Review.PENDING)
    call_command("check_pair_fluency", "--set", "fine", "--lm", str(tiny_gpt2_dir), "--device", "cpu")
    pair.refresh_from_db()
    assert pair.review == Review.PENDING and pair.provenance["fluency"]["increase"] == pytest.approx(0.4)
    assert not pair.provenance["fluency"]["held_back"]
    # and a second run skips it
    monkeypatch.setattr(ReferenceLM, "fluency", lambda self, pairs: pytest.fail("checked twice"))
    call_command("check_pair_fluency", "--set", "fine", "--lm", str(tiny_gpt2_dir), "--device", "cpu")


def test_an_unknown_set_is_an_error(db):
    with pytest.raises(CommandError, match="no pair set 'missing'"):
        call_command("check_pair_fluency", "--set", "missing", "--lm", "x")
    assert not Pair.objects.exists()
