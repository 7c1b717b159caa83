"""The generated-negatives step of the dataset workspace (annotation.workspace), registered in apps.py."""

from django.urls import reverse

from annotation.models import CandidateSource, Dataset
from annotation.selectors_dataset import dataset_corpus_counts
from annotation.workspace import Action, Number, StepState, StepStatus, WorkspaceStep, workspace_memo
from core.selectors import job_params_q
from negatives.demo_mlm import TOY_DEFAULT_NOTE, mlm_default_is_toy
from negatives.job_params import GenerateNegativesParams
from negatives.models import DROP_REASONS, NO_NEGATIVE_REASONS, GenerationOutcome
from negatives.selectors import dataset_generation_counts, dataset_negatives_figures, dataset_toy_negatives
from negatives.services.generation import TOY_MODEL_NOTE


def negatives_state(dataset: Dataset) -> StepState:
    counts = workspace_memo(dataset, "corpus", lambda: dataset_corpus_counts(dataset=dataset))
    outcomes = dataset_generation_counts(dataset=dataset)
    generated = counts["false_by_source"].get(CandidateSource.MLM_NEGATIVE, 0)
    numbers = [Number("generated candidates", generated)]
    numbers += [Number(f"questions: {o.label}", outcomes[o.value]) for o in GenerationOutcome if o.value in outcomes]
    url = reverse("admin:annotation_dataset_negatives", args=[dataset.pk])
    if not counts["questions"]:
        return StepState(StepStatus.WAITING, "Import dialogues first.", numbers)
    if outcomes:
        figures = dataset_negatives_figures(dataset=dataset)
        numbers.append(
            Number("latest run: questions that received a negative", figures["received"], of=figures["questions"])
        )
        numbers += [
            Number(f"latest run, without a negative: {NO_NEGATIVE_REASONS[r]}", n)
            for r, n in figures["without_negative"].items()
            if n
        ]
        numbers += [Number(f"latest run, not added: {DROP_REASONS[r]}", n) for r, n in figures["dropped"].items() if n]
        # named apart: Park et al.'s 27.28 % is per WordPiece token, a word can hold several
        for key, label in (
            ("share_of_words_replaced", "words"),
            ("share_of_wordpiece_tokens_replaced", "WordPiece tokens"),
        ):
            if figures[key] is not None:
                numbers.append(
                    Number(f"latest run: {label} replaced (of responses with a selected word)", figures[key], "percent")
                )
        toy = dataset_toy_negatives(dataset=dataset)
        return StepState(
            StepStatus.DONE,
            f"{generated:,} negatives made from the ground truths with a masked LM (Park et al.); annotators "
            "score them like the retrieved candidates.",
            numbers + ([Number("made by a toy model", toy)] if toy else []),
            [Action("Generate negatives again", url, "annotation.change_dataset", primary=False)],
            extra={"toy_model": f"{toy:,} of these negatives were {TOY_MODEL_NOTE}."} if toy else {},
        )
    return StepState(
        StepStatus.OPTIONAL,
        "Optional: add negatives made by manipulating each ground truth with a masked LM (Park et al.), "
        "before opening the questions for annotation.",
        numbers,
        [Action("Generate negatives", url, "annotation.change_dataset", primary=False)],
        extra={"toy_model": TOY_DEFAULT_NOTE} if mlm_default_is_toy() else {},
    )


def negatives_jobs(dataset: Dataset):
    return job_params_q(kinds=[GenerateNegativesParams.kind], key="dataset", value=dataset.name)


NEGATIVES_STEP = WorkspaceStep("negatives", 25, "Generated negatives", negatives_state, negatives_jobs)
