"""The negatives app's job kinds and their typed parameters (core.job_registry)."""

from dataclasses import dataclass
from typing import Any, ClassVar

from annotation.job_params import DatasetNextStep, skipped_text
from core.job_registry import JobParams
from core.readable import count, percent


@dataclass(frozen=True, kw_only=True)
class GenerateNegativesParams(DatasetNextStep, JobParams):
    kind: ClassVar[str] = "generate_negatives"
    label: ClassVar[str] = "generate negatives (masked LM)"
    start_permission: ClassVar[str | None] = "annotation.change_dataset"
    queue: ClassVar[str] = "gpu"  # a masked LM over every word of every ground truth

    dataset: str
    mlm: str = ""  # local directory or Hugging Face id (core.hub); empty: negatives.demo_mlm.mlm_default
    per_question: int = 1
    threshold: float = 0.5  # Park et al.'s t
    seed: int = 0
    min_words: int = 3  # the paper skips shorter responses
    max_mask_share: float = 1.0  # 1.0: as the paper, every selected word is replaced
    replace_with_context: bool = False  # the paper's replacement does not see the context
    top_k: int = 10  # samples after the first negative come from each position's top k
    batch_size: int = 64  # questions per committed batch; a shard holds whole batches

    def summary(self, result: dict[str, Any]) -> str:
        text = (
            f"Generated negatives for {count(result['generated'])} of {count(result['questions'])} questions of "
            f"dataset {result['dataset']}: {count(result['candidates_added'])} candidates added"
        )
        if result.get("mean_share_replaced") is not None:
            text += f", {percent(result['mean_share_replaced'])} of the words replaced on average"
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
        text = f"{text}; questions {others}." if others else f"{text}."
        if result.get("toy_model"):  # recorded from the model folder's marker (core.toy_models)
            text += " Toy model: the negatives were " + result["toy_model"] + "."
        return text
