"""A fluency check on each edited response: a reference causal LM's per-token loss of the edited
(incorrect) response against the original (correct) one. A rule's edit can garble a sentence
("Was this your first time ?" -> "Was . your . time ?"); a garbled pair is the easiest to get
right (spotting bad grammar, not understanding), so it is held back before review.

Each response is scored alone (no context): fluency is a property of the sentence. The loss is
the mean negative log-probability per token, the first token predicted from the tokenizer's
beginning-of-text token (GPT-2's end-of-text when it has no other)."""

from dataclasses import dataclass

from core.hub import model_resolve
from core.model_loading import dtype_kwargs, resolve_device, resolve_dtype
from pairs.text import common_ends

# nats per token the edited response may lose against the original: a one-word substitution in a
# sentence of ten tokens costs a few nats on that word, well under one per token on average; a
# garbled sentence costs more on every token it breaks. Provisional: on a labelled sample no LM
# trained here separates garbled from fluent edits at any bar (docs/pairs.md, "Fluency check").
MAX_LOSS_INCREASE = 1.0


@dataclass(frozen=True)
class Fluency:
    correct_loss: float
    incorrect_loss: float
    # the mean loss increase on the tokens after the edit, which both responses share: a garbled
    # edit breaks what follows it ("They are not keep the documents"), one word for another mostly
    # costs on the word itself; 0.0 when the edit reaches the end
    continuation_increase: float = 0.0
    # the total log-probability lost from the first edited token on (the minimal-pair measure)
    total_increase: float = 0.0

    @property
    def increase(self) -> float:
        return self.incorrect_loss - self.correct_loss

    def held_back(self, max_increase: float = MAX_LOSS_INCREASE) -> bool:
        return self.increase > max_increase


class ReferenceLM:
    """A causal LM (a folder or a Hugging Face id, safetensors only) that gives per-token losses."""

    def __init__(self, name: str, *, setting: str = "--lm", device: str | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        resolved = model_resolve(name=name, setting=setting)
        self.name = name
        self.version = f"{resolved.repo_id}@{resolved.revision_sha}" if resolved.from_hub else name
        self.device = resolve_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(resolved.path)
        self.model = AutoModelForCausalLM.from_pretrained(
            resolved.path, use_safetensors=True, **dtype_kwargs(resolve_dtype("auto", self.device))
        ).to(self.device)
        self.model.eval()
        start = self.tokenizer.bos_token_id
        self.start_id = start if start is not None else self.tokenizer.eos_token_id

    def token_losses(self, texts: list[str]) -> list[tuple[list[int], list[float]]]:
        """Each text's token ids (the start token first) and the loss of each token after the first
        (one forward pass per text: pairs are few, and unpadded inputs give exactly the losses of
        the text alone)."""
        import torch

        results = []
        with torch.inference_mode():
            for text in texts:
                ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
                if self.start_id is not None:
                    ids = [self.start_id, *ids]
                if len(ids) < 2:
                    results.append((ids, []))
                    continue
                tensor = torch.tensor([ids], device=self.device)
                logits = self.model(input_ids=tensor).logits[0, :-1].float()
                losses = torch.nn.functional.cross_entropy(logits, tensor[0, 1:], reduction="none")
                results.append((ids, losses.tolist()))
        return results

    def fluency(self, pairs: list[tuple[str, str]]) -> list[Fluency]:
        """(correct, incorrect) -> their losses."""
        measured = self.token_losses([text for pair in pairs for text in pair])
        return [pair_fluency(*measured[2 * k], *measured[2 * k + 1]) for k in range(len(pairs))]


def pair_fluency(
    correct_ids: list[int], correct_losses: list[float], incorrect_ids: list[int], incorrect_losses: list[float]
) -> Fluency:
    """Compare two token sequences that differ in one edited span: the shared prefix has the same
    losses in both, so what differs is the edited span and the shared continuation after it."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    prefix, suffix = common_ends(correct_ids, incorrect_ids)
    # losses[i] is the loss of ids[i + 1]: the shared continuation is the last `suffix` losses
    continuation = (
        mean(incorrect_losses[len(incorrect_losses) - suffix :]) - mean(correct_losses[len(correct_losses) - suffix :])
        if suffix
        else 0.0
    )
    first_edited = max(prefix - 1, 0)
    return Fluency(
        correct_loss=mean(correct_losses),
        incorrect_loss=mean(incorrect_losses),
        continuation_increase=continuation,
        total_increase=sum(incorrect_losses[first_edited:]) - sum(correct_losses[first_edited:]),
    )
