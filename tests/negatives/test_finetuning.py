"""Fine-tuning the masked LM on dialogue text (mlm_finetune, finetune_mlm)."""

import json
import math
import random
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.services.dialogue_import import dialogues_import
from core.errors import JobCancelled, UserError
from negatives import selectors
from negatives.mlm import MaskedLM
from negatives.services.finetuning import REPORT_FILE, mlm_finetune
from tests.factories import ContextFactory, DatasetFactory, QuestionFactory, UtteranceFactory
from tests.negatives.dialogues import write_dailydialog
from tests.tiny_models import build_tiny_gpt2, train_tokenizer

TRAIN_DIALOGUES = 150  # the module's fine-tuning run: ~600 texts, ~40 steps


def import_dialogues(dialogue_text, folder: Path, *, name: str, n: int) -> str:
    """A dataset of the first ``n`` training dialogues, imported as DailyDialog is."""
    path = write_dailydialog(folder / f"{name}.txt", dialogue_text.dialogues[:n])
    dialogues_import(path=path, fmt="dailydialog", dataset_name=name)
    return name


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


@pytest.fixture(scope="module")
def finetuned(django_db_setup, django_db_blocker, dialogue_text, dialogue_tiny_mlm_dir, tmp_path_factory) -> dict:
    """The tiny MLM fine-tuned on a dataset of DailyDialog train dialogues, once for the module
    (the dataset in a transaction rolled back at once)."""
    from django.db import transaction

    folder = tmp_path_factory.mktemp("finetuned")
    with django_db_blocker.unblock(), transaction.atomic():
        name = import_dialogues(dialogue_text, folder, name="dd-train", n=TRAIN_DIALOGUES)
        report = mlm_finetune(
            out=folder / "model",
            base=dialogue_tiny_mlm_dir,
            dataset_name=name,
            epochs=1 if dialogue_text.source == "dailydialog" else 40,  # a dozen test texts otherwise
            batch_size=16,
            learning_rate=1e-3,
        )
        transaction.set_rollback(True)
    return {"report": report, "folder": folder}


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_saved_folder_loads_as_a_masked_lm(finetuned):
    mlm = MaskedLM.load(finetuned["report"]["out"], setting="test", device="cpu")
    assert mlm.tokenizer.mask_token == "[MASK]"
    assert mlm.version == finetuned["report"]["version"]


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_loss_on_the_training_text_falls(finetuned, dialogue_tiny_mlm_dir, mlm_loss, dialogue_text):
    texts = dialogue_text.utterances[:300]
    before, after = mlm_loss(dialogue_tiny_mlm_dir, texts), mlm_loss(Path(finetuned["report"]["out"]), texts)
    assert after < before - 0.5


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
@pytest.mark.shared_data
def test_held_out_loss_falls(shared_data, finetuned, dialogue_tiny_mlm_dir, mlm_loss):
    """On DailyDialog validation dialogues (the test texts are too few to generalise from)."""
    before, after = mlm_loss(dialogue_tiny_mlm_dir), mlm_loss(Path(finetuned["report"]["out"]))
    print(f"\nheld-out MLM loss: {before:.3f} before, {after:.3f} after fine-tuning")
    assert after < before - 0.5


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_steps_are_a_batch_of_distinct_texts_each(finetuned):
    report = finetuned["report"]
    assert report["dataset"] == "dd-train"
    assert report["steps"] == math.ceil(report["texts"] * report["epochs"] / 16)
    assert math.isfinite(report["train_loss"])


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_report_is_saved_beside_the_model(finetuned):
    saved = json.loads((Path(finetuned["report"]["out"]) / REPORT_FILE).read_text())
    assert saved["base_version"] == finetuned["report"]["base_version"]
    assert saved["texts"] == finetuned["report"]["texts"]


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_no_partial_folder_is_left(finetuned):
    assert leftovers(finetuned["folder"]) == []


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
@pytest.mark.shared_data
def test_dialogue_mlm_fixture_beats_its_base_on_held_out_text(
    shared_data, dialogue_mlm_dir, dialogue_tiny_mlm_dir, mlm_loss
):
    before, after = mlm_loss(dialogue_tiny_mlm_dir), mlm_loss(dialogue_mlm_dir)
    print(f"\nheld-out MLM loss: {before:.3f} base, {after:.3f} dialogue_mlm_dir")
    assert after < before - 1.0


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_dialogue_mlm_fixture_learnt_its_text(dialogue_mlm_dir, dialogue_tiny_mlm_dir, mlm_loss, dialogue_text):
    texts = dialogue_text.utterances[:300]
    assert mlm_loss(dialogue_mlm_dir, texts) < mlm_loss(dialogue_tiny_mlm_dir, texts) - 1.0


@pytest.mark.django_db
def test_dataset_texts_are_its_turns_and_ground_truths_each_after_its_context_once():
    dataset = DatasetFactory()
    context = ContextFactory(dataset=dataset, turns=["Hello there.", "Hi!", "How are you?"])
    QuestionFactory(dataset=dataset, context=context, ground_truth="Fine, thanks.")
    QuestionFactory(dataset=dataset, context=context, ground_truth="Good, and you?")
    QuestionFactory(dataset=dataset, context=ContextFactory(dataset=dataset, turns=["Hi!", "  "]), ground_truth="Hi!")
    QuestionFactory(ground_truth="Another dataset's text.")
    texts = list(selectors.dataset_texts(dataset=dataset))
    assert texts == [
        ("", "Hello there."),
        ("Hello there.", "Hi!"),
        ("Hello there. Hi!", "How are you?"),
        ("Hello there. Hi! How are you?", "Fine, thanks."),
        ("Hello there. Hi! How are you?", "Good, and you?"),
        ("", "Hi!"),
        ("Hi!", "Hi!"),
    ]


@pytest.mark.django_db
def test_repository_texts_come_after_the_lines_before_them_in_the_same_file():
    first = UtteranceFactory(text="One.", source="a.txt", source_line=1)
    repository = first.repository
    for text, source, line in [("Two.", "a.txt", 2), ("Far.", "a.txt", 9), ("Other file.", "b.txt", 10)]:
        UtteranceFactory(repository=repository, text=text, source=source, source_line=line)
    top, _ = selectors.repository_snapshot(repository=repository)
    assert list(selectors.repository_texts(repository=repository, up_to_id=top)) == [
        ("", "One."),
        ("One.", "Two."),
        ("", "Far."),
        ("", "Other file."),
    ]


@pytest.mark.django_db
def test_repository_texts_stop_at_the_snapshot():
    first = UtteranceFactory(text="One.")
    top, count = selectors.repository_snapshot(repository=first.repository)
    UtteranceFactory(repository=first.repository, text="Added during the run.")
    assert (count, list(selectors.repository_texts(repository=first.repository, up_to_id=top))) == (1, [("", "One.")])


def test_the_stream_is_shuffled_whole():
    from negatives.training import shuffled

    texts = [str(i) for i in range(50)]
    out = list(shuffled(iter(texts), random.Random(0), size=8))
    assert sorted(out) == sorted(texts)
    assert out != texts


class Progress:
    """Records what a JobProgress is told; ``cancel_at``: raise JobCancelled at that step."""

    def __init__(self, cancel_at: int | None = None) -> None:
        self.updates: list[tuple[int, int, str | None]] = []
        self.cancel_at = cancel_at

    def update(self, *, done: int, total: int, failed: int = 0, force: bool = False, phase: str | None = None, **_):
        self.updates.append((done, total, phase))
        if self.cancel_at is not None and done >= self.cancel_at:
            raise JobCancelled()


@pytest.fixture
def small_dataset(db, dialogue_text, tmp_path) -> str:
    return import_dialogues(dialogue_text, tmp_path, name="dd-small", n=20)


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_progress_counts_the_steps_under_the_fine_tuning_phase(small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    progress = Progress()
    report = mlm_finetune(
        out=tmp_path / "model", base=dialogue_tiny_mlm_dir, dataset_name=small_dataset, batch_size=16, progress=progress
    )
    assert {phase for _, _, phase in progress.updates} == {"fine-tuning"}
    assert progress.updates[0][0] == 0
    assert progress.updates[-1][:2] == (report["steps"], report["steps"])


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_a_cancelled_run_leaves_no_folder(small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    with pytest.raises(JobCancelled):
        mlm_finetune(
            out=tmp_path / "model",
            base=dialogue_tiny_mlm_dir,
            dataset_name=small_dataset,
            batch_size=4,
            progress=Progress(cancel_at=2),
        )
    assert not (tmp_path / "model").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_command_fine_tunes_and_prints_its_report(small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    stdout = StringIO()
    out = tmp_path / "model"
    call_command(
        "finetune_mlm",
        "--dataset",
        small_dataset,
        "--out",
        str(out),
        "--mlm",
        str(dialogue_tiny_mlm_dir),
        stdout=stdout,
    )
    report = json.loads(stdout.getvalue())
    assert (report["out"], report["dataset"], report["epochs"]) == (str(out), small_dataset, 1.0)
    assert MaskedLM.load(out, setting="test", device="cpu").version == report["version"]


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_command_starts_from_the_setting_by_default(small_dataset, dialogue_tiny_mlm_dir, tmp_path, settings):
    settings.WELLCHOSEN_MLM_MODEL = str(dialogue_tiny_mlm_dir)
    stdout = StringIO()
    call_command("finetune_mlm", "--dataset", small_dataset, "--out", str(tmp_path / "model"), stdout=stdout)
    assert json.loads(stdout.getvalue())["base"] == str(dialogue_tiny_mlm_dir)


@pytest.fixture(scope="session")
def tiny_gpt2_base(tiny_tokenizer_dir, tmp_path_factory) -> Path:
    return build_tiny_gpt2(tiny_tokenizer_dir, tmp_path_factory.mktemp("gpt2-base"))


@pytest.fixture(scope="session")
def mlm_without_mask_token(tmp_path_factory) -> Path:
    """A BERT masked LM whose tokenizer (a byte-level BPE) has no mask token."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from tests.tiny_models import TEXTS

    folder = tmp_path_factory.mktemp("no-mask")
    tokenizer = train_tokenizer(TEXTS * 3, folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    BertForMaskedLM(config).save_pretrained(folder)
    return folder


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "no-such-dataset"], "no dataset 'no-such-dataset'"),
        (["--repository", "no-such-repository"], "no repository 'no-such-repository'"),
        (["--dataset", "dd-small", "--repository", "r"], "not allowed with argument"),
        ([], "one of the arguments --dataset --repository is required"),
        (["--dataset", "dd-small", "--mlm", "{gpt2}"], "--mlm: {gpt2} holds a gpt2 model, which is not a masked"),
        (["--dataset", "dd-small", "--mlm", "{no_mask}"], "--mlm: the tokenizer in {no_mask} has no mask token"),
        (["--dataset", "dd-small", "--mlm", "{tmp}/nowhere"], "--mlm: '{tmp}/nowhere' is no local directory"),
        (["--dataset", "dd-small", "--epochs", "0"], "epochs must be above 0"),
    ],
    ids=["no-dataset", "no-repository", "both", "neither", "gpt2", "no-mask-token", "no-folder", "zero-epochs"],
)
def test_bad_input_is_a_command_error_and_leaves_no_folder(
    args, message, small_dataset, dialogue_tiny_mlm_dir, tiny_gpt2_base, mlm_without_mask_token, tmp_path
):
    paths = {"gpt2": tiny_gpt2_base, "no_mask": mlm_without_mask_token, "tmp": tmp_path}
    args = [arg.format(**paths) for arg in args]
    if "--mlm" not in args:
        args += ["--mlm", str(dialogue_tiny_mlm_dir)]
    out = tmp_path / "model"
    with pytest.raises(CommandError, match=message.format(**paths).replace("(", r"\(")):
        call_command("finetune_mlm", *args, "--out", str(out), stdout=StringIO())
    assert not out.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
@pytest.mark.parametrize("names", [{}, {"dataset_name": "dd-small", "repository_name": "r"}], ids=["neither", "both"])
def test_the_service_wants_exactly_one_source(names, small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    with pytest.raises(UserError, match="name exactly one"):
        mlm_finetune(out=tmp_path / "model", base=dialogue_tiny_mlm_dir, **names)
    assert list(tmp_path.iterdir()) == [tmp_path / "dd-small.txt"]


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_base_may_be_a_hugging_face_id(hub, small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    sha = hub.publish("tiny/dialogue-bert", dialogue_tiny_mlm_dir)
    stdout = StringIO()
    out = tmp_path / "model"
    call_command(
        "finetune_mlm", "--dataset", small_dataset, "--mlm", "tiny/dialogue-bert", "--out", str(out), stdout=stdout
    )
    report = json.loads(stdout.getvalue())
    assert (report["base"], report["base_version"]) == ("tiny/dialogue-bert", f"tiny/dialogue-bert@{sha}")
    assert (out / "model.safetensors").is_file()


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_without_a_model_the_command_names_the_setting(small_dataset, tmp_path, settings):
    settings.WELLCHOSEN_MLM_MODEL = ""
    with pytest.raises(CommandError, match="WELLCHOSEN_MLM_MODEL"):
        call_command("finetune_mlm", "--dataset", small_dataset, "--out", str(tmp_path / "model"))
    assert not (tmp_path / "model").exists()


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_an_existing_folder_is_never_overwritten(small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(UserError, match="already exists"):
        mlm_finetune(out=out, base=dialogue_tiny_mlm_dir, dataset_name=small_dataset)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


@pytest.mark.heavy  # trains a model: the outcome does not depend on the database engine
def test_the_same_seed_gives_the_same_model(small_dataset, dialogue_tiny_mlm_dir, tmp_path):
    def digest(name: str, seed: int) -> str:  # model_version without the folder's name
        report = mlm_finetune(
            out=tmp_path / name, base=dialogue_tiny_mlm_dir, dataset_name=small_dataset, batch_size=16, seed=seed
        )
        return report["version"].split("@")[1]

    assert digest("first", 0) == digest("second", 0) != digest("other", 1)
