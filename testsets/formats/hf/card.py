"""README.md of a release's folder: a Hugging Face dataset card (the Hub's YAML header, then prose)."""

import json

from testsets.shortcuts.report import balance_sentence, baseline_result, limitation_sentence

from .facts import ReleaseFacts
from .lm_eval_task import DATA_FILE, lm_eval_command, lm_eval_task_path
from .records import RECORD_FIELDS

SATO_2020_BIBTEX = """@inproceedings{sato-etal-2020-evaluating,
    title = "Evaluating Dialogue Generation Systems via Response Selection",
    author = "Sato, Shiki and Akama, Reina and Ouchi, Hiroki and Suzuki, Jun and Inui, Kentaro",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.acl-main.55",
    doi = "10.18653/v1/2020.acl-main.55",
    pages = "593--599",
}"""

UNKNOWN_LICENSE = (
    "**License: unknown.** Nobody has yet stated under which terms these texts may be reused. The "
    "dialogues and retrieved responses come from corpora with their own licenses; until the "
    "release's license is set (TestSet admin, field *license*), the Hub shows no terms, and users "
    "cannot tell whether they may redistribute or train on it. Set it before publishing."
)


# RECORD_FIELDS' types as the card's dataset_info.features writes them (datasets >= 4: "list")
FEATURE_YAML = {
    "string": "dtype: string",
    "int64": "dtype: int64",
    "list: string": "list: string",
    "list: list: int64": "list:\n      list: int64",
}


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def pretty_name(facts: ReleaseFacts) -> str:
    return f"WellChosen response selection: {facts.name}"


def render_card(facts: ReleaseFacts, *, jsonl_bytes: int) -> bytes:
    return (_yaml_header(facts, jsonl_bytes=jsonl_bytes) + _body(facts)).encode("utf-8")


def _yaml_header(facts: ReleaseFacts, *, jsonl_bytes: int) -> str:
    # Strings are written as JSON strings, which YAML reads as double-quoted scalars.
    features = "".join(f"  - name: {name}\n    {FEATURE_YAML[kind]}\n" for name, (kind, _) in RECORD_FIELDS.items())
    return (
        "---\n"
        f"license: {json.dumps(facts.testset.license)}\n"
        "language:\n- en\n"
        "task_categories:\n- multiple-choice\n- text-retrieval\n"
        f"pretty_name: {json.dumps(pretty_name(facts))}\n"
        f"size_categories:\n- {size_category(len(facts.records))}\n"
        "configs:\n- config_name: default\n  data_files:\n  - split: test\n"
        f"    path: {DATA_FILE}\n"
        "dataset_info:\n  features:\n"
        f"{features}"
        f"  splits:\n  - name: test\n    num_bytes: {jsonl_bytes}\n    num_examples: {len(facts.records)}\n"
        "---\n\n"
    )


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(ci) -> str:
    return "" if not ci else f" (95 % CI {ci[0]:.3f} to {ci[1]:.3f})"


def _body(facts: ReleaseFacts) -> str:
    m = facts.manifest
    counts = m.get("counts", {})
    k = m.get("false_per_question")
    lines = [
        f"# {pretty_name(facts)}",
        "",
        f"A response-selection test set for dialogue systems, built with WellChosen following Sato et al. "
        f"(ACL 2020): {len(facts.records)} questions, each a dialogue context with 1 ground-truth response and "
        f"{k} false candidates that human annotators judged clearly wrong. A system is asked which "
        "choice continues the dialogue; its accuracy ranks systems in line with human judgement.",
        "",
    ]
    if facts.testset.license == "unknown":
        lines += [UNKNOWN_LICENSE, ""]
    lines += ["## Fields", "", f"`{DATA_FILE}` and `data/test.parquet`, one record per question:", ""]
    lines += ["| field | type | meaning |", "| --- | --- | --- |"]
    # "<release>" would be read as an HTML tag by the Hub's Markdown renderer and vanish
    lines += [f"| `{name}` | {kind} | {_html_text(meaning)} |" for name, (kind, meaning) in RECORD_FIELDS.items()]
    lines += ["", "## How it was built", "", *_build_section(facts, counts), *_agreement_section(facts)]
    lines += [
        "## Intended use",
        "",
        "Evaluating and ranking dialogue response generation or selection systems by selection accuracy: "
        "the system scores every choice given the context, the best-scored choice is its answer. Not meant "
        "for training: the false candidates are few and hand-filtered, and training on them invalidates the "
        "test.",
        "",
        "## Limitations",
        "",
        "- Contexts and responses are English open-domain chit-chat from the source corpus; accuracy on it "
        "says little about task-oriented or other-language dialogue.",
        "- False candidates are retrieved (or generated) and then filtered by human scores; the retrievers "
        "and the filter thresholds shape which mistakes the test can detect.",
        "- Scores come from a handful of annotators per response; their agreement is reported above.",
        "- Texts are as the corpus wrote them (tokenised, lower-cased where it was); they are not checked for "
        "personal information beyond what the source corpus did.",
        *_known_limitation(m),
        "",
        *_audit_section(m),
        "## Evaluate with lm-evaluation-harness",
        "",
        f"The task `{lm_eval_task_path(facts.testset)}` scores each choice as a continuation of the "
        "context (turns joined by newlines, a newline after the last) and selects the highest summed "
        "log-probability; `acc` is WellChosen's accuracy under its summed log-prob rule. From this folder:",
        "",
        "```sh",
        lm_eval_command(facts.testset),
        "```",
        "",
        "## Integrity",
        "",
        "`manifest.json` lists the sha256 of every file of this folder and the release's own manifest "
        "(its counts, rules and the sha256 of the TSV, JSONL and CSV exports).",
        "",
        "## Citation",
        "",
        "```bibtex",
        SATO_2020_BIBTEX,
        "```",
        "",
    ]
    return "\n".join(lines)


def _build_section(facts: ReleaseFacts, counts: dict) -> list[str]:
    m = facts.manifest
    rules = m.get("rules", {})
    lines = [
        f"- Source dataset: `{m.get('dataset')}`; seed {m.get('seed')}; built {m.get('created_at')} with "
        f"WellChosen {m.get('software', {}).get('wellchosen')}.",
        "- Retrieved and generated candidates (false ones and derived ground truths), by source and "
        "retriever/model version, with their number in the release:",
    ]
    lines += [f"  - {tool}: {n}" for tool, n in sorted(facts.tools.items())] or ["  - none"]
    lines += [
        f"- Filter rules version {rules.get('version')}: "
        + ", ".join(f"{key} = {value}" for key, value in sorted(rules.items()) if key != "version"),
        f"- Annotators: {m.get('annotators_per_item')} planned per response; scores per choice in the release: "
        + ", ".join(f"{n} scores: {c} choices" for n, c in sorted(facts.scores_per_choice.items()))
        + f"; {facts.annotators} distinct annotators.",
    ]
    lines += _stopping_lines(m)
    lines += [f"- {line}" for line in facts.pay] or [
        "- Recruitment and pay: TODO: who the annotators were and what they were paid."
    ]
    lines += _sources_section(m)
    lines += ["", "Counts at every step (the filter preview of the dataset when the release was built):", ""]
    lines += ["| step | count |", "| --- | ---: |"]
    lines += [f"| source questions | {counts.get('source_questions')} |"]
    lines += [
        f"| source questions, ground truth {d} | {n} |"
        for d, n in counts.get("source_questions_by_ground_truth", {}).items()
    ]
    lines += [f"| false candidates {d} | {n} |" for d, n in counts.get("candidates_by_decision", {}).items()]
    lines += [
        f"| passed questions with fewer than {m.get('false_per_question')} false candidates left | "
        f"{counts.get('source_questions_too_few_false')} |",
        f"| questions in the release | {counts.get('questions')} |",
        f"| of which derived (an acceptable response as ground truth) | {counts.get('derived_questions')} |",
        f"| candidates in the release | {counts.get('candidates')} |",
        f"| scores in the release | {counts.get('scores')} |",
        "",
    ]
    return lines


def _sources_section(m: dict) -> list[str]:
    """Per source of the dataset's false candidates, the share of those annotated that the filter
    rules dropped as acceptable (a false negative) or ungrammatical; releases built before the
    manifest recorded it say nothing."""
    rows = m.get("candidates_by_source")
    if not rows:
        return []
    lines = [
        "",
        "What the annotators made of the dataset's false candidates, per source (a candidate is annotated when "
        "it has a score that counts; acceptable and ungrammatical as the filter rules decide, ungrammatical "
        "first; a candidate still being scored is in neither):",
        "",
        "| source | annotated (n) | acceptable | ungrammatical | verdict final |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        n = row["annotated"]
        lines.append(
            f"| {row['source']} | {n} | {row['acceptable'] / n:.1%} ({row['acceptable']}) | "
            f"{row['ungrammatical'] / n:.1%} ({row['ungrammatical']}) | {row['complete']} |"
        )
    return lines


def _agreement_section(facts: ReleaseFacts) -> list[str]:
    dataset = facts.manifest.get("agreement", {}).get("dataset", {})
    fleiss, alpha = facts.agreement["fleiss"], facts.agreement["krippendorff_ordinal"]
    return [
        "## Agreement",
        "",
        f"Whole dataset `{dataset.get('dataset')}` (as `manage.py agreement` reports it): Fleiss' kappa "
        f"{_fmt(dataset.get('fleiss_kappa_6'))} over six classes (0-5) and {_fmt(dataset.get('fleiss_kappa_2'))} "
        f"over two (> 3 vs <= 3), {dataset.get('items')} responses x {dataset.get('raters')} raters "
        f"({dataset.get('items_skipped')} with another number of raters left out).",
        "",
        f"This release's frozen scores: Fleiss' kappa {_fmt(fleiss['6']['kappa'])}{_interval(fleiss['6']['ci95'])} "
        f"over six classes and {_fmt(fleiss['2']['kappa'])}{_interval(fleiss['2']['ci95'])} over two "
        f"({fleiss['items']} responses x {fleiss['raters']} raters); Krippendorff's alpha (ordinal) "
        f"{_fmt(alpha['alpha'])}{_interval(alpha['ci95'])} over {alpha['items']} responses. Intervals: "
        "200 bootstrap resamples of the responses, seed 0.",
        "",
    ]


def _known_limitation(m: dict) -> list[str]:
    sentence = limitation_sentence(m.get("shortcut_audit") or {})
    return [f"- **Known limitation: shortcuts.** {sentence}"] if sentence else []


def _audit_section(m: dict) -> list[str]:
    """The manifest's shortcut audit (releases built before it have none, and no section: their
    card keeps its bytes)."""
    audit = m.get("shortcut_audit")
    if not audit:
        return []
    lines = [
        "## Shortcut audit",
        "",
        "Can the ground truth be told apart from the false candidates without the context? Each baseline "
        "below picks one choice per question from the choices alone; a test of context understanding needs "
        f"them at chance ({audit['chance']:.3f}: 1 / choices per question, averaged). {audit['questions']} "
        + (f"questions (a seeded sample of the {audit['sampled_from']})" if "sampled_from" in audit else "questions")
        + f"; the classifier is cross-validated over questions ({audit['folds']} folds, seed "
        f"{audit['seed']}), so it never sees a question it is tested on.",
        "",
        "| baseline | accuracy | above chance |",
        "| --- | --- | --- |",
    ]
    for row in audit["baselines"]:
        lines.append(f"| {row['label']} | {baseline_result(row)} | {'yes' if row.get('above_chance') else 'no'} |")
    balance = balance_sentence(m.get("shortcut_balance"))
    return [*lines, "", *([balance, ""] if balance else [])]


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _stopping_lines(manifest: dict) -> list[str]:
    """How early the source dataset's decisions were made (releases built before probabilistic
    stopping have no "stopping" entry, and their card keeps its bytes)."""
    stopping = manifest.get("stopping")
    if not stopping:
        return []
    k = manifest.get("annotators_per_item")
    return [
        f"- Stopping: tolerance {stopping['tolerance']:g} (0: a response stops only when its decision can no "
        f"longer change); {stopping['decisions_on_fewer_scores']} of the source dataset's {stopping['decisions']} "
        f"decisions rest on fewer than {k} scores, {stopping['decisions_by_model']} of them made by the model; "
        f"expected share of decisions that {k} scores would change: {stopping['expected_changed']:.2%}; spot checks: "
        f"{stopping['spot_checks_changed']} of {stopping['spot_checks_audited']} changed."
    ] + _testset_stopping_lines(stopping.get("testset"), k)


def _testset_stopping_lines(testset: dict | None, k) -> list[str]:
    """The same for the release's own responses (releases built before it was recorded have none)."""
    if not testset:
        return []
    return [
        f"  - In this release: {testset['decisions_on_fewer_scores']} of its {testset['decisions']} responses (ground "
        f"truths and false candidates, each counted once) rest on fewer than {k} scores, "
        f"{testset['decisions_by_model']} of them decided by the model; expected share that {k} scores would "
        f"change: {testset['expected_changed']:.2%}."
    ]
