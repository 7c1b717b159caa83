"""Pickled weights (torch.save's format, which can run code when unpickled) are never loaded: a
model folder with pickled weights and no safetensors weights is refused, naming the file, when a
system or a masked LM is registered and when it is loaded; every model loads with
``use_safetensors=True``. A hub model is fetched without its pickled files (tests/core/test_hub.py)."""

import shutil

import pytest
from django.core.management import CommandError, call_command

from core.errors import UserError
from core.hub import model_resolve
from evaluation.models import System
from evaluation.scoring.checkpoints import load_model
from negatives.mlm import MaskedLM
from tests.tiny_models import pickled_copy

REFUSED = r"holds pickled weights \(pytorch_model\.bin\) and no safetensors weights"


@pytest.fixture(scope="module")
def pickled_gpt2(tiny_gpt2_dir, tmp_path_factory):
    return pickled_copy(tiny_gpt2_dir, tmp_path_factory.mktemp("pickled") / "gpt2")


@pytest.fixture(scope="module")
def pickled_mlm(tiny_mlm_dir, tmp_path_factory):
    return pickled_copy(tiny_mlm_dir, tmp_path_factory.mktemp("pickled") / "mlm")


def test_the_pickled_copy_is_a_loadable_pytorch_model_bin(pickled_gpt2):
    # what the library's own default would load, when it allows pickle at all
    assert (pickled_gpt2 / "pytorch_model.bin").is_file() and not list(pickled_gpt2.glob("*.safetensors"))


def test_registering_a_system_with_pickled_weights_is_refused_naming_the_file(db, pickled_gpt2):
    with pytest.raises(CommandError, match=f"^checkpoint: {pickled_gpt2} {REFUSED}"):
        call_command("register_system", "old", "--kind", "causal", "--checkpoint", str(pickled_gpt2))
    assert not System.objects.exists()


def test_loading_a_checkpoint_with_pickled_weights_is_refused(pickled_gpt2):
    with pytest.raises(UserError, match=REFUSED):
        load_model(kind="causal", checkpoint=str(pickled_gpt2), device="cpu")


def test_a_masked_lm_with_pickled_weights_is_refused_naming_the_setting(pickled_mlm):
    with pytest.raises(UserError, match=f"^WELLCHOSEN_MLM_MODEL: {pickled_mlm} {REFUSED}"):
        MaskedLM.load(pickled_mlm, setting="WELLCHOSEN_MLM_MODEL", device="cpu")


@pytest.mark.parametrize(
    "name", ["model.pt", "model.pth", "last.ckpt", "weights.pkl", "pytorch_model-00001-of-00002.bin"]
)
def test_every_pickle_weight_name_is_refused(tiny_gpt2_dir, tmp_path, name):
    folder = shutil.copytree(tiny_gpt2_dir, tmp_path / "model")
    (folder / "model.safetensors").rename(folder / name)
    with pytest.raises(UserError, match=rf"holds pickled weights \({name}\)"):
        model_resolve(name=str(folder), setting="checkpoint")


def test_pickled_weights_beside_safetensors_ones_are_left_unread(tiny_gpt2_dir, tmp_path):
    folder = shutil.copytree(tiny_gpt2_dir, tmp_path / "model")
    (folder / "pytorch_model.bin").write_bytes(b"not even a pickle")
    resolved = model_resolve(name=str(folder), setting="checkpoint")
    assert resolved.load_kwargs()["use_safetensors"] is True
    model, _ = load_model(kind="causal", checkpoint=str(folder), device="cpu")
    assert model.config.n_layer == 2


def test_a_tokenizer_folder_needs_no_weights(pickled_gpt2):
    # a tokenizer is read without the model's weights, so pickled ones beside it do not matter
    assert model_resolve(name=str(pickled_gpt2), setting="tokenizer", weights=False).path == str(pickled_gpt2)
