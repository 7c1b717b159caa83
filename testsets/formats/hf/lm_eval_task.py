"""The lm-evaluation-harness task of a release (lm_eval/wellchosen_<release>.yaml in its folder).

It asks the same question as `evaluate` under the summed log-prob rule: each choice is a
continuation of the context, the choice with the highest summed log-probability is selected.

- doc_to_text renders the turns as ContextTemplate("\\n") does (each turn followed by "\\n", no
  speaker tags).
- target_delimiter "" : lm-eval's default " " would put a space before every choice, which our
  scorer never scores.
- lm-eval moves the context's trailing whitespace (our "\\n") to the start of every continuation
  (HFLM._encode_pair), so each choice's log-likelihood also holds log p("\\n" | context): the same
  for every choice of a question, so the selection and acc are ours; the log-likelihoods differ
  from ours by that constant, and acc_norm (per character) is not our loss rule.
- The task states its context form: the plain template. lm-eval's --apply_chat_template would send
  the whole rendered context as one user message, while a system with ``chat_template`` on renders
  each turn as its own message (evaluation.scoring.chat), so chat models are compared with
  WellChosen's own evaluation, not through this task.
"""

from testsets.models import TestSet

DATA_FILE = "data/test.jsonl"
LM_EVAL_DIR = "lm_eval"


def lm_eval_task_name(testset: TestSet) -> str:
    return f"wellchosen_{testset.name}"


def lm_eval_task_path(testset: TestSet) -> str:
    return f"{LM_EVAL_DIR}/{lm_eval_task_name(testset)}.yaml"


def lm_eval_command(testset: TestSet, *, model: str = "pretrained=gpt2") -> str:
    # data_files is relative: lm-eval (the datasets library) reads it from the working directory
    return (
        f"lm_eval --model hf --model_args {model} --include_path {LM_EVAL_DIR} "
        f"--tasks {lm_eval_task_name(testset)} --log_samples --output_path results"
    )


def render_lm_eval_task(testset: TestSet) -> bytes:
    return (
        f"# lm-evaluation-harness task for the WellChosen release {testset.name}.\n"
        "# Run it from this folder (data_files is read relative to the working directory):\n"
        f"#   {lm_eval_command(testset)}\n"
        "# Context form: plain template (turns joined by newlines), as a WellChosen system without its\n"
        "# chat template scores it. With --apply_chat_template lm-eval sends this text as one user message;\n"
        "# a WellChosen system with chat_template on renders each turn as its own message instead, so the\n"
        "# two are comparable for plain-template models only.\n"
        f"task: {lm_eval_task_name(testset)}\n"
        "output_type: multiple_choice\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {DATA_FILE}\n"
        "test_split: test\n"
        '# the context turns, each followed by a newline (ContextTemplate("\\n"), no speaker tags)\n'
        'doc_to_text: "{% for turn in context %}{{ turn }}\\n{% endfor %}"\n'
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: label\n"
        "# the choice follows the context directly, as our scorer scores it (lm-eval's default is a space)\n"
        'target_delimiter: ""\n'
        "metric_list:\n"
        "  - metric: acc\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "  - metric: acc_norm\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "metadata:\n"
        "  version: 1.0\n"
    ).encode()
