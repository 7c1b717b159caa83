"""Fine-tune a masked LM (a local folder or a Hugging Face id) on dialogue text with the MLM objective.

Park et al. (NAACL 2021) fine-tuned bert-base-uncased on the DailyDialog training dialogues for
one epoch before manipulating responses: the scores and replacements then follow how people
talk rather than the pre-training corpora. This does the same with transformers' Trainer and
its masked-LM collator, on the texts of a dataset or of an utterance repository.

The texts stream from the database through a shuffle buffer (a repository can hold millions
of utterances). The result is written into a hidden folder next to ``out`` and renamed at the
end: a failed or cancelled run leaves no half-written model behind.
"""

import json
import logging
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from annotation.models import Dataset, Repository
from core.errors import UserError
from negatives import selectors
from negatives.mlm import MaskedLM, model_version

logger = logging.getLogger(__name__)

REPORT_FILE = "finetuning.json"  # what made the checkpoint, saved beside it


def mlm_finetune(
    *,
    out: Path,
    base: Path | str,
    dataset_name: str | None = None,
    repository_name: str | None = None,
    epochs: float = 1.0,
    batch_size: int = 32,
    learning_rate: float = 5e-5,
    mlm_probability: float = 0.15,
    max_length: int = 128,
    seed: int = 0,
    progress=None,
    base_setting: str = "base model",
) -> dict:
    """Fine-tune the masked LM in ``base`` on a dataset's or a repository's texts (exactly one)
    and save model and tokenizer in ``out``, which must not exist yet. ``progress``: a
    core.services.jobs.JobProgress; ``base_setting`` names where ``base`` came from (--mlm,
    WELLCHOSEN_MLM_MODEL) in error messages. Returns a report (also saved as finetuning.json)."""
    _check_settings(
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        mlm_probability=mlm_probability,
        max_length=max_length,
    )
    source, read, count = _text_source(dataset_name=dataset_name, repository_name=repository_name)
    out = Path(out)
    if out.exists():
        raise UserError(f"output folder {out} already exists; name a new one (a fine-tuned model is never overwritten)")

    from transformers import set_seed

    set_seed(seed)
    mlm = MaskedLM.load(base, setting=base_setting, device="cpu")  # the Trainer places the model
    max_length = min(max_length, mlm.max_length)
    n_texts = count()
    if n_texts == 0:
        ((kind, name),) = source.items()
        raise UserError(f"{kind} {name!r} has no text to fine-tune on")
    steps = max(1, math.ceil(n_texts * epochs / batch_size))

    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    started = time.monotonic()
    try:
        from negatives.training import mlm_train

        result = mlm_train(
            mlm=mlm,
            read=read,
            folder=scratch,
            steps=steps,
            batch_size=batch_size,
            learning_rate=learning_rate,
            mlm_probability=mlm_probability,
            max_length=max_length,
            seed=seed,
            progress=progress,
        )
        report = {
            **source,
            "texts": n_texts,
            "steps": result["steps"],
            "epochs": epochs,
            "train_loss": result["train_loss"],
            "batch_size": batch_size,
            "learning_rate": learning_rate,
            "mlm_probability": mlm_probability,
            "max_length": max_length,
            "seed": seed,
            "device": result["device"],
            "base_version": mlm.version,
        }
        # Only what made the weights: the same run again gives the same folder, hence the same
        # model_version (which digests the .json files too).
        (scratch / REPORT_FILE).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    report.update(base=mlm.name, out=str(out), version=model_version(out), seconds=round(time.monotonic() - started, 1))
    logger.info(
        "fine-tuned %s into %s: %s steps, train loss %.4f", mlm.version, out, report["steps"], report["train_loss"]
    )
    return report


def _check_settings(
    *, epochs: float, batch_size: int, learning_rate: float, mlm_probability: float, max_length: int
) -> None:
    if not epochs > 0:
        raise UserError(f"epochs must be above 0, not {epochs}")
    if batch_size < 1:
        raise UserError(f"batch size must be at least 1, not {batch_size}")
    if not learning_rate > 0:
        raise UserError(f"learning rate must be above 0, not {learning_rate}")
    if not 0 < mlm_probability < 1:
        raise UserError(f"mlm_probability must be between 0 and 1, not {mlm_probability}")
    if max_length < 8:
        raise UserError(f"max_length must be at least 8 tokens, not {max_length}")


def _text_source(
    *, dataset_name: str | None, repository_name: str | None
) -> tuple[dict, Callable[[], Iterator[tuple[str, str]]], Callable[[], int]]:
    """({"dataset" or "repository": name}, a function that reads the texts afresh, one that counts them)."""
    if bool(dataset_name) == bool(repository_name):
        raise UserError("fine-tune on a dataset or on a repository: name exactly one (--dataset or --repository)")
    if dataset_name:
        dataset = Dataset.objects.filter(name=dataset_name).first()
        if dataset is None:
            raise UserError(f"no dataset {dataset_name!r}")

        def read() -> Iterator[tuple[str, str]]:
            return selectors.dataset_texts(dataset=dataset)

        # Its distinct texts are only known by reading them; a dataset is small next to a repository.
        return {"dataset": dataset.name}, read, lambda: sum(1 for _ in read())
    repository = Repository.objects.filter(name=repository_name).first()
    if repository is None:
        raise UserError(f"no repository {repository_name!r}")
    top, count = selectors.repository_snapshot(repository=repository)

    def read() -> Iterator[tuple[str, str]]:
        return selectors.repository_texts(repository=repository, up_to_id=top)

    return {"repository": repository.name}, read, lambda: count
