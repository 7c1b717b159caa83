"""The negatives app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass
from typing import Any, ClassVar

from annotation.job_params import DatasetNextStep, skipped_text
from core.job_registry import JobParams, param
from core.readable import count, percent
from negatives.models import DROP_REASONS, NO_NEGATIVE_REASONS


@dataclass(frozen=True, kw_only=True)
class GenerateNegativesParams(DatasetNextStep, JobParams):
    kind: ClassVar[str] = "generate_negatives"
    label: ClassVar[str] = "generate negatives (masked LM)"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"
    queue: ClassVar[str] = "gpu"  # a masked LM over every word of every ground truth

    dataset: str = param(help="the dataset whose ground truths are manipulated", form=False)
    # A hub id is resolved (perhaps downloaded) by the job (core.hub); empty: negatives.demo_mlm.mlm_default.
    mlm: str = param(
        "",
        label="Masked LM",
        help="a local model folder or a Hugging Face model id (org/name, optionally @revision: fetched by the job "
        "into the Hugging Face cache, safetensors weights only); empty: the WELLCHOSEN_MLM_MODEL setting, or while "
        "it is unset the demo's toy masked LM (trained by load_demo)",
    )
    per_question: int = param(
        1, help="negatives per ground truth: the best replacement first, then seeded samples from each word's top k"
    )
    threshold: float = param(  # Park et al.'s t
        0.5, help="replace a word when log P(word | context, response) - log P(word | response) exceeds this"
    )
    seed: int = param(0, help="seed of the samples after the first negative")
    min_words: int = param(3, help="skip shorter ground truths (the paper does)")
    max_mask_share: float = param(
        1.0,
        help="replace at most this share of a response's words, the highest-scoring first (1: every selected "
        "word, as the paper)",
    )
    replace_with_context: bool = param(
        False, help="let the replacement see the context (an ablation; the paper replaces without it)"
    )
    punctuation: bool = param(
        False,
        help="replace punctuation and let a word become punctuation, as the paper's BERT input does "
        "(off: only words with a letter or digit are replaced, and only by such pieces)",
    )
    top_k: int = param(10, help="samples after the first negative come from each word's top k")
    paper: bool = param(
        False,
        help="Park et al.'s own setting: context and response as one segment, the previous turn as the context, "
        "every WordPiece token scored and replaced on its own, selected when its score is at least the threshold",
    )
    skip_guard: bool = param(
        False,
        help="generate even when the masked LM falls short of the guard's bar (pseudo-perplexity and context gain "
        "on the dataset's first ground truths; docs/negatives.md): the report records it",
    )
    batch_size: int = param(  # a shard holds whole batches
        64, help="questions per committed batch", form=False, command=False
    )

    def summary(self, result: dict[str, Any]) -> str:
        # questions that received a candidate (a report from before they were counted: those with a selected word)
        received = result.get("questions_with_negative", result["generated"])
        text = (
            f"Negatives for {count(received)} of {count(result['questions'])} questions of dataset "
            f"{result['dataset']}: {count(result['candidates_added'])} candidates added"
        )
        dropped = [(result.get(reason, 0), why) for reason, why in DROP_REASONS.items()]
        if any(n for n, _ in dropped):
            not_added = sum(n for n, _ in dropped)
            reasons = "; ".join(f"{count(n)} {why}" for n, why in dropped if n)
            text += f" ({count(not_added)} not added: {reasons})"
        # a report from before the shares were renamed has mean_share_replaced / share_of_tokens_replaced
        words = result.get("share_of_words_replaced", result.get("mean_share_replaced"))
        tokens = result.get("share_of_wordpiece_tokens_replaced", result.get("share_of_tokens_replaced"))
        if words is not None:
            text += f", {percent(words)} of the words replaced"
            if tokens is not None:
                text += f" ({percent(tokens)} of the WordPiece tokens)"
        without = result.get("without_negative")
        if without is not None:  # a report from before the reasons were counted has none
            reasons = "; ".join(f"{count(n)} {NO_NEGATIVE_REASONS[r]}" for r, n in without.items() if n)
            others = skipped_text(result, {"skipped_finished": "done before"})
            if reasons:
                text += f"; questions without a negative: {reasons}"
        else:
            others = skipped_text(
                result,
                {
                    "skipped_finished": "done before",
                    "no_word_selected": "without a word above the threshold",
                    "too_short": "too short",
                    "too_long": "too long",
                    "failed": "failed",
                },
            )
            received_none = result["generated"] - received
            if received_none > 0:
                text += f"; {count(received_none)} questions with a selected word got no new candidate"
        text = f"{text}; questions {others}." if others else f"{text}."
        text += guard_text(result.get("mlm_guard"))
        if result.get("toy_model"):  # recorded from the model folder's marker (core.toy_models)
            text += " Toy model: the negatives were " + result["toy_model"] + "."
        return text


def guard_text(guard: dict | None) -> str:
    """What the summary says of the masked LM's guard (a report from before it has none)."""
    if not guard or not guard.get("measured", True):
        return ""
    figures = f"pseudo-perplexity {guard['pseudo_perplexity']:,.1f} per word, context gain {guard['context_gain']:+.3f}"
    if guard["passed"]:
        return f" Masked LM guard passed ({figures})."
    if guard["skipped"]:
        return f" Masked LM below the guard's bar ({figures}): generated anyway (--skip-guard)."
    return f" Masked LM below the guard's bar ({figures}): a toy model, not refused."
