"""Models by local folder or Hugging Face id (core.hub), resolved by the real huggingface_hub client
against the hub double of tests/hub_double.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import UserError
from core.hub import model_name_check, model_resolve
from tests.conftest import PROJECT_ROOT
from tests.hub_double import hub_configure

PICKLED = {"pytorch_model.bin": b"pickle", "tf_model.h5": b"h5", "flax_model.msgpack": b"msgpack", "model.pt": b"pt"}


def test_a_hub_id_resolves_to_the_commit_of_its_default_branch(hub, tiny_gpt2_dir, tmp_path):
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    model = model_resolve(name="tiny/gpt2", setting="--checkpoint")
    assert (model.repo_id, model.revision_sha, model.version) == ("tiny/gpt2", sha, f"tiny/gpt2@{sha}")
    folder = Path(model.path)
    assert folder.is_relative_to(tmp_path / "hf" / "hub")  # huggingface_hub's cache, where HF_HUB_CACHE says
    assert (folder / "model.safetensors").read_bytes() == (tiny_gpt2_dir / "model.safetensors").read_bytes()
    assert model.load_kwargs() == {"local_files_only": True, "use_safetensors": True}


@pytest.mark.parametrize("asked", ["v1", "old-commit", "refs/pr/1"])
def test_a_revision_after_the_at_sign_resolves_to_that_commit(hub, tiny_gpt2_dir, asked):
    # given a model whose main branch moved on after a tagged commit, and a pull request's ref
    old = hub.publish("tiny/gpt2", tiny_gpt2_dir, ref="v1")
    hub.repositories["tiny/gpt2"].refs["refs/pr/1"] = old
    new = hub.publish("tiny/gpt2", tiny_gpt2_dir, extra={"README.md": b"moved on"})
    revision = old if asked == "old-commit" else asked
    # when the name asks for the tag, the commit or the ref, then it resolves to the old commit
    assert model_resolve(name=f"tiny/gpt2@{revision}", setting="x").revision_sha == old != new
    # and without a revision to the branch's head
    assert model_resolve(name="tiny/gpt2", setting="x").revision_sha == new


def test_a_recorded_commit_overrides_the_branch_a_name_asks_for(hub, tiny_gpt2_dir):
    old = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    hub.publish("tiny/gpt2", tiny_gpt2_dir, extra={"README.md": b"moved on"})
    assert model_resolve(name="tiny/gpt2@main", setting="x", revision=old).revision_sha == old


def test_only_configuration_tokenizer_and_safetensors_files_are_fetched(hub, tiny_gpt2_dir):
    hub.publish("tiny/gpt2", tiny_gpt2_dir, extra={**PICKLED, "onnx/model.onnx": b"onnx"})
    folder = Path(model_resolve(name="tiny/gpt2", setting="x").path)
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in tiny_gpt2_dir.iterdir())
    fetched = {request.rsplit("/", 1)[-1] for request in hub.requests if request.startswith("GET /tiny/gpt2/resolve/")}
    assert fetched.isdisjoint({*PICKLED, "model.onnx"}) and "model.safetensors" in fetched


def test_a_repository_without_safetensors_weights_is_refused(hub, tiny_gpt2_dir):
    sha = hub.publish("tiny/pickled", tiny_gpt2_dir, skip=("model.safetensors",), extra=PICKLED)
    with pytest.raises(UserError, match=f"^--checkpoint: the Hugging Face model tiny/pickled@{sha} has no safetensors"):
        model_resolve(name="tiny/pickled", setting="--checkpoint")


def test_a_tokenizer_alone_needs_no_weights(hub, tiny_tokenizer_dir):
    sha = hub.publish("tiny/tokenizer", tiny_tokenizer_dir, extra={"config.json": b"{}"})
    assert model_resolve(name="tiny/tokenizer", setting="--tokenizer", weights=False).revision_sha == sha


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nobody/nothing", r"^--checkpoint nobody/nothing: no such Hugging Face model at http://127\.0\.0\.1:\d+"),
        ("tiny/gpt2@v9", r"^--checkpoint tiny/gpt2@v9: the Hugging Face model tiny/gpt2 has no revision 'v9'"),
    ],
)
def test_an_unknown_repository_or_revision_is_a_user_error(hub, tiny_gpt2_dir, name, message):
    hub.publish("tiny/gpt2", tiny_gpt2_dir)
    with pytest.raises(UserError, match=message):
        model_resolve(name=name, setting="--checkpoint")


def test_offline_without_a_cached_copy_names_the_model_the_setting_and_how_to_fetch_it(
    hub, hub_offline, tiny_gpt2_dir, tmp_path
):
    hub.publish("tiny/gpt2", tiny_gpt2_dir)
    hub_offline()
    with pytest.raises(UserError) as error:
        model_resolve(name="tiny/gpt2@v1", setting="WELLCHOSEN_MLM_MODEL")
    message = str(error.value)
    assert message.startswith("WELLCHOSEN_MLM_MODEL tiny/gpt2@v1: the model is not (completely) in the Hugging Face")
    assert str(tmp_path / "hf" / "hub") in message and "HF_HUB_OFFLINE=1 forbids downloading it" in message
    assert "`hf download tiny/gpt2 --revision v1`" in message
    assert hub.requests == []


def test_offline_a_cached_copy_resolves_to_the_same_commit_without_the_network(hub, hub_offline, tiny_gpt2_dir):
    hub.publish("tiny/gpt2", tiny_gpt2_dir)
    online = model_resolve(name="tiny/gpt2", setting="x")
    hub_offline()
    hub.requests.clear()
    assert model_resolve(name="tiny/gpt2", setting="x") == online
    assert hub.requests == []


def test_an_unreachable_hub_without_a_cached_copy_says_so(monkeypatch, tmp_path):
    hub_configure(monkeypatch, endpoint="http://127.0.0.1:9", home=tmp_path / "hf", offline=False)  # nothing listens
    with pytest.raises(UserError, match=r"^x tiny/gpt2: .* the hub at http://127\.0\.0\.1:9 cannot be reached"):
        model_resolve(name="tiny/gpt2", setting="x")


def test_a_local_folder_is_used_as_it_is(tiny_gpt2_dir):
    model = model_resolve(name=str(tiny_gpt2_dir), setting="x")
    assert (model.path, model.repo_id, model.revision_sha) == (str(tiny_gpt2_dir.resolve()), "", "")
    assert model.load_kwargs() == {"local_files_only": True, "use_safetensors": True}


def test_a_folder_wins_over_a_hub_id_of_the_same_name(tiny_gpt2_dir, monkeypatch):
    monkeypatch.chdir(tiny_gpt2_dir.parent)
    assert model_resolve(name=tiny_gpt2_dir.name, setting="x").path == str(tiny_gpt2_dir.resolve())


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "no model given"),
        ("/no/such/folder", "'/no/such/folder' is no local directory and no Hugging Face model id"),
        ("./relative", "'./relative' is no local directory"),
        ("a/b/c", "'a/b/c' is no local directory"),
        ("org/name@", "'org/name@' names no revision after '@'"),
    ],
)
def test_a_name_that_is_neither_a_folder_nor_a_model_id_is_refused_before_any_download(name, message):
    with pytest.raises(UserError, match=f"^--mlm: {message}"):
        model_name_check(name=name, setting="--mlm")


@pytest.mark.parametrize(
    ("name", "repo_id", "revision"), [("gpt2", "gpt2", None), ("org/x@refs/pr/3", "org/x", "refs/pr/3")]
)
def test_a_model_id_is_checked_without_the_hub(name, repo_id, revision):
    hub_name = model_name_check(name=name, setting="x")
    assert (hub_name.repo_id, hub_name.revision, str(hub_name)) == (repo_id, revision, name)


def test_the_hugging_face_variables_of_the_environment_apply(hub, tiny_gpt2_dir, tmp_path):
    # given a process started with the hub's variables (no test set-up in it)
    sha = hub.publish("tiny/gpt2", tiny_gpt2_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {"HF_HOME": str(tmp_path / "home"), "HF_HUB_CACHE": str(tmp_path / "cache")}
    env |= {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token"}
    code = (
        "import json; from core.hub import model_resolve; "
        "print(json.dumps(model_resolve(name='tiny/gpt2', setting='x').__dict__))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    # then huggingface_hub asked that endpoint, with that token, and cached the model where HF_HUB_CACHE says
    model = json.loads(done.stdout.strip().splitlines()[-1])
    assert model["revision_sha"] == sha and Path(model["path"]).is_relative_to(tmp_path / "cache")
    assert hub.authorizations and set(hub.authorizations) == {"Bearer hf_test_token"}


def test_a_cache_that_cannot_be_written_is_a_user_error(hub, tiny_gpt2_dir, tmp_path, monkeypatch):
    hub.publish("tiny/gpt2", tiny_gpt2_dir)
    (tmp_path / "a-file").write_text("not a folder")
    hub_configure(monkeypatch, endpoint=hub.url, home=tmp_path / "a-file", offline=False)
    with pytest.raises(UserError, match=r"^x tiny/gpt2: cannot write the Hugging Face cache .*a-file/hub"):
        model_resolve(name="tiny/gpt2", setting="x")
