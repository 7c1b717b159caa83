"""A masked language model (a local directory or a Hugging Face model id, core.hub), and batched
log-probabilities at masked positions.

Every forward pass of the manipulation goes through :meth:`MaskedLM.log_probs`: many masked
variants of many responses, sorted by length and packed up to a token budget, with the
vocabulary projection applied only at the positions asked for (a BERT-base pass over 256
sequences would otherwise materialise gigabytes of logits).
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserError
from core.hub import ResolvedModel, model_resolve
from core.model_loading import dtype_kwargs, resolve_device, resolve_dtype
from core.toy_models import folder_is_toy


@dataclass
class Sequence:
    """One input to the model and the positions whose log-probabilities are wanted."""

    input_ids: list[int]
    token_type_ids: list[int] | None
    positions: list[int]


class MaskedLM:
    """A masked LM and its tokenizer, loaded once per job. ``name`` is what it is known by (its folder,
    or its Hugging Face id), ``version`` the exact weights (a digest of the folder, or ``id@commit``)."""

    def __init__(
        self, model, tokenizer, *, path: str, version: str, device: str, name: str = "", toy: bool = False
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.path = path
        self.name = name or path
        self.version = version
        self.device = device
        self.toy = toy  # a toy model (core.toy_models): what it generates is labelled as such
        self.mask_id = tokenizer.mask_token_id
        self.max_length = min(
            int(getattr(model.config, "max_position_embeddings", 512) or 512),
            int(tokenizer.model_max_length) if tokenizer.model_max_length < 100_000 else 512,
        )
        self.uses_token_types = "token_type_ids" in tokenizer.model_input_names
        self._head = self._vocabulary_head(model)

    @classmethod
    def load(cls, name: str | Path, *, setting: str, device: str | None = None, dtype: str = "auto") -> "MaskedLM":
        """Load the masked LM ``name``, a folder or a Hugging Face id (fetched into the Hugging Face
        cache unless it is there); ``setting`` names where the name came from, for the error messages."""
        resolved = mlm_resolve(name=str(name), setting=setting)
        return cls.from_resolved(resolved, setting=setting, device=device, dtype=dtype)

    @classmethod
    def from_resolved(
        cls, resolved: ResolvedModel, *, setting: str, device: str | None = None, dtype: str = "auto"
    ) -> "MaskedLM":
        """Load the masked LM whose files ``resolved`` located (core.hub.model_resolve)."""
        from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

        folder = Path(resolved.path)
        where = resolved.version
        try:
            config = AutoConfig.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError) as error:
            raise UserError(f"{setting}: {where} holds no model configuration ({error})") from error
        if type(config) not in AutoModelForMaskedLM._model_mapping:
            raise UserError(
                f"{setting}: {where} holds a {config.model_type} model, which is not a masked language model "
                f"(architectures: {', '.join(config.architectures or ['none'])})"
            )
        architectures = config.architectures or []
        if architectures and not any(name.endswith(("ForMaskedLM", "ForPreTraining")) for name in architectures):
            raise UserError(
                f"{setting}: {where} holds a {architectures[0]} checkpoint, not a masked language model "
                "(its masked-LM head would be random)"
            )
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError) as error:
            raise UserError(f"{setting}: {where} holds no tokenizer ({error})") from error
        if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
            raise UserError(f"{setting}: the tokenizer in {where} has no mask token; a masked LM needs one")
        if not tokenizer.is_fast:
            raise UserError(f"{setting}: the tokenizer in {where} is not a fast tokenizer (word boundaries need one)")
        device = resolve_device(device)
        model = AutoModelForMaskedLM.from_pretrained(
            folder, **resolved.load_kwargs(), **dtype_kwargs(resolve_dtype(dtype, device))
        )
        model = model.to(device).eval()
        version = resolved.version if resolved.from_hub else model_version(folder)
        return cls(
            model,
            tokenizer,
            path=str(folder),
            version=version,
            device=device,
            name=resolved.repo_id,
            toy=folder_is_toy(folder),
        )

    @staticmethod
    def _vocabulary_head(model):
        """(encoder, head) when the model's vocabulary projection can be applied to chosen
        positions only (BERT's ``cls``, RoBERTa's ``lm_head``); None: full logits."""
        encoder = getattr(model, model.base_model_prefix, None)
        for name in ("cls", "lm_head"):
            head = getattr(model, name, None)
            if encoder is not None and head is not None:
                return encoder, head
        return None

    def log_probs(self, sequences: list[Sequence], *, batch_tokens: int = 8192) -> list:
        """For each sequence, a (len(positions), vocabulary) float32 tensor of log-probabilities on the CPU."""
        import torch

        results: list = [None] * len(sequences)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i].input_ids))
        start = 0
        while start < len(order):
            longest, end = 0, start
            while end < len(order):
                longest = max(longest, len(sequences[order[end]].input_ids))
                if (end - start + 1) * longest > batch_tokens and end > start:
                    break
                end += 1
            chunk = order[start:end]
            start = end
            width = max(len(sequences[i].input_ids) for i in chunk)
            ids = torch.full((len(chunk), width), self.tokenizer.pad_token_id or 0, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            types = torch.zeros((len(chunk), width), dtype=torch.long)
            rows, cols = [], []
            for row, index in enumerate(chunk):
                sequence = sequences[index]
                n = len(sequence.input_ids)
                ids[row, :n] = torch.tensor(sequence.input_ids)
                attention[row, :n] = 1
                if sequence.token_type_ids is not None:
                    types[row, :n] = torch.tensor(sequence.token_type_ids)
                rows.extend([row] * len(sequence.positions))
                cols.extend(sequence.positions)
            inputs = {"input_ids": ids.to(self.device), "attention_mask": attention.to(self.device)}
            if self.uses_token_types:
                inputs["token_type_ids"] = types.to(self.device)
            with torch.inference_mode():
                rows_t, cols_t = torch.tensor(rows, device=self.device), torch.tensor(cols, device=self.device)
                if self._head is not None:
                    encoder, head = self._head
                    hidden = encoder(**inputs).last_hidden_state[rows_t, cols_t]
                    logits = head(hidden)
                else:
                    logits = self.model(**inputs).logits[rows_t, cols_t]
                picked = torch.log_softmax(logits.float(), dim=-1).cpu()
            offset = 0
            for index in chunk:
                n = len(sequences[index].positions)
                results[index] = picked[offset : offset + n]
                offset += n
        return results


def mlm_resolve(*, name: str, setting: str) -> ResolvedModel:
    """The folder of the masked LM ``name`` (core.hub.model_resolve), for ``setting``."""
    if not name.strip():
        raise UserError(f"{setting}: no masked LM given (set WELLCHOSEN_MLM_MODEL or pass --mlm)")
    return model_resolve(name=name, setting=setting)


def model_version(folder: Path) -> str:
    """``<folder name>@<sha256 prefix>`` of the weights and configuration: two checkpoints of one
    name are told apart, and a candidate records which one made it."""
    digest = hashlib.sha256()
    names = sorted(p.name for p in folder.iterdir() if p.is_file())
    for name in names:
        if name.endswith((".safetensors", ".bin", ".json", ".txt", ".model")):
            digest.update(name.encode())
            with open(folder / name, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return f"{folder.name}@{digest.hexdigest()[:12]}"
