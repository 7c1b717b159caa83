"""The commands, options and make targets that the documentation names exist.

A command line in a code span or a fenced block of README.md or docs/*.md is checked when it is
``manage.py CMD ...``, ``python -m config.stack ...`` (``config.stack manage CMD ...`` included),
``make TARGET ...`` or a span that starts with a management command's name: the command must be
one of Django's, its subcommand one of its subparsers, each ``--option`` one of its parser's and each
make target one of the Makefile's. A span that is an option alone (``--seed``) must be an option of
some command, of ``config.stack``, of a script under bench/ or of the outside tools listed below.
"""

import argparse
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from config import stack

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
BENCH_README = PROJECT_ROOT / "bench" / "README.md"
# One compact table per figure: the limit grows with the figures measured (15 lines each at most), not with prose.
BENCH_README_MAX_LINES = 360
# Options of tools that are not the project's, named in the docs on their own.
OUTSIDE_OPTIONS = frozenset({"--profile", "--scale", "--apply_chat_template"})  # docker compose, lm-eval
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
SPAN = re.compile(r"`([^`\n]+)`")
OPTION = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*")
# A command line ends at a shell operator or a comment ("A | --b" is a choice of options, not a pipe).
LINE_END = re.compile(r"\s(?:\|(?!\s+-)|&&|;|#|>)\s.*$")


@dataclass(frozen=True)
class Parser:
    """The option strings of one command-line parser and its subcommands' parsers."""

    options: frozenset[str]
    subcommands: dict[str, "Parser"]

    @classmethod
    def of(cls, parser: argparse.ArgumentParser) -> "Parser":
        subcommands = {}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                subcommands = {name: cls.of(sub) for name, sub in action.choices.items()}
        return cls(frozenset(parser._option_string_actions), subcommands)


@cache
def command_parsers() -> dict[str, Parser]:
    return {
        name: Parser.of(load_command_class(app, name).create_parser("manage.py", name))
        for name, app in get_commands().items()
    }


@cache
def stack_parser() -> Parser:
    captured: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.parse_args

    def capture(self, *args, **kwargs):
        captured.append(self)
        raise SystemExit(0)

    settings_module = os.environ.get("DJANGO_SETTINGS_MODULE")
    argparse.ArgumentParser.parse_args = capture
    try:
        stack.main([])
    except SystemExit:
        pass
    finally:
        argparse.ArgumentParser.parse_args = original
        if settings_module is not None:  # main() drops a default it did not get from the caller
            os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    return Parser.of(captured[0])


def make_targets(makefile: Path = PROJECT_ROOT / "Makefile") -> set[str]:
    targets = set()
    for line in makefile.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+(?:\s+[A-Za-z0-9_.-]+)*)\s*:(?!=)", line)
        if match:
            targets.update(match.group(1).split())
    return targets


@cache
def bench_options() -> frozenset[str]:
    return frozenset(
        option
        for script in (PROJECT_ROOT / "bench").glob("*.py")
        for option in re.findall(r"[\"'](--[A-Za-z][A-Za-z0-9_-]*)[\"']", script.read_text())
    )


def command_lines(text: str) -> Iterator[str]:
    """Every line of the fenced blocks (continuations joined) and every inline code span."""
    for block in FENCE.findall(text):
        yield from block.replace("\\\n", " ").splitlines()
    yield from SPAN.findall(FENCE.sub("", text))


def tokens(line: str) -> list[str]:
    line = LINE_END.sub("", f" {line} ").strip()
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def check_options(parser: Parser, name: str, arguments: list[str]) -> Iterator[str]:
    for position, argument in enumerate(arguments):
        argument = argument.strip("[](){},;")  # `[--format tsv|jsonl]`, `(--dataset NAME | ...)`
        if argument == "--":  # what follows is another program's command line
            return
        if parser.subcommands and not argument.startswith("-"):
            if "<" in argument or argument.isupper() or argument in ("…", "..."):
                return
            for alternative in argument.split("|"):  # `crowd cost|status BATCH`
                if alternative not in parser.subcommands:
                    yield f"{name}: no subcommand {alternative!r}"
                else:
                    yield from check_options(
                        parser.subcommands[alternative], f"{name} {alternative}", arguments[position + 1 :]
                    )
            return
        option = OPTION.fullmatch(argument.split("=", 1)[0])
        if option and option.group() not in parser.options:
            yield f"{name}: no option {option.group()!r}"


def check_line(line: str) -> Iterator[str]:
    words = tokens(line)
    commands = command_parsers()
    for position, word in enumerate(words):
        rest = words[position + 1 :]
        if word.endswith("manage.py") or (word == "manage" and position > 0 and words[position - 1].endswith("stack")):
            if rest and not rest[0].startswith("-") and re.fullmatch(r"[a-z_0-9]+", rest[0]):
                if rest[0] not in commands:
                    yield f"no management command {rest[0]!r}"
                else:
                    yield from check_options(commands[rest[0]], rest[0], rest[1:])
            return
        if word == "config.stack" and position > 0 and words[position - 1] == "-m":
            if rest and rest[0] == "manage":
                continue
            yield from check_options(stack_parser(), "config.stack", rest)
            return
        if word == "make" and position == 0:
            for target in rest:
                if target.startswith("-") or "=" in target:
                    continue
                if target not in make_targets():
                    yield f"no make target {target!r}"
            return
    if words and words[0] in commands:
        if commands[words[0]].subcommands and len(words) > 1 and not re.fullmatch(r"[a-z_|-]+", words[1]):
            return  # `crowd 0001`: a migration of the app, not the command
        yield from check_options(commands[words[0]], words[0], words[1:])
    elif words and OPTION.fullmatch(words[0]):
        known = set(OUTSIDE_OPTIONS) | bench_options() | stack_parser().options
        known.update(*(parser.options for parser in command_parsers().values()))
        known.update(
            option
            for parser in command_parsers().values()
            for sub in parser.subcommands.values()
            for option in sub.options
        )
        for word in words:
            option = OPTION.fullmatch(word.strip("[](){},;").split("=", 1)[0])
            if option and option.group() not in known:
                yield f"no command has the option {option.group()!r}"


def doc_errors(text: str) -> list[str]:
    return [f"`{line.strip()}`: {error}" for line in command_lines(text) for error in check_line(line)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(PROJECT_ROOT)))
def test_commands_and_options_named_in_the_docs_exist(doc):
    assert doc_errors(doc.read_text()) == []


def test_a_missing_option_subcommand_command_or_target_is_found():
    text = """Export with `manage.py export_testset NAME --no-such-option`, or:

```sh
.venv/bin/python manage.py crowd create [--no-such-flag] \\
    --name x
.venv/bin/python manage.py crowd no_such_subcommand
python manage.py no_such_command --format tsv
make no-such-target
python -m config.stack run --no-such-port 1
```

A bare `--no-such-anything`, and `build_testset --no-such-build-option`.
"""
    errors = doc_errors(text)
    assert [error.split(": ", 1)[1] for error in errors] == [
        "crowd create: no option '--no-such-flag'",
        "crowd: no subcommand 'no_such_subcommand'",
        "no management command 'no_such_command'",
        "no make target 'no-such-target'",
        "config.stack run: no option '--no-such-port'",
        "export_testset: no option '--no-such-option'",
        "no command has the option '--no-such-anything'",
        "build_testset: no option '--no-such-build-option'",
    ]


def test_existing_commands_options_and_targets_pass():
    text = """`manage.py export_testset NAME --format tsv`, `python -m config.stack run --port 8000`,
`config.stack manage import_dialogues --help`, `make run PORT=8123`, `--seed`, `build_testset --help`.
"""
    assert doc_errors(text) == []


def test_bench_readme_stays_short():
    lines = len(BENCH_README.read_text().splitlines())
    assert lines <= BENCH_README_MAX_LINES, f"bench/README.md has {lines} lines (at most {BENCH_README_MAX_LINES})"


MARKDOWN = [*DOCS, BENCH_README, PROJECT_ROOT / "CHANGELOG.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens,
    a repeated heading numbered."""
    anchors, seen = set(), {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(f"{anchor}-{seen[anchor]}" if anchor in seen else anchor)
        seen[anchor] = seen.get(anchor, 0) + 1
    return anchors


def link_errors(page: Path, text: str) -> list[str]:
    errors = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            errors.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked.read_text()):
            errors.append(f"{target}: no such heading")
    return errors


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda path: str(path.relative_to(PROJECT_ROOT)))
def test_links_between_the_docs_lead_to_a_page_and_heading(page):
    assert link_errors(page, page.read_text()) == []


def test_a_link_to_a_missing_page_or_heading_is_found():
    page = PROJECT_ROOT / "docs" / "scaling.md"
    text = (
        "[tiers](../bench/README.md#dense-search-tiers), [round](../bench/README.md#a-newcomers-round-on-make-run), "
        "[gone](../bench/README.md#no-such-table), [nowhere](no-such-page.md), [site](https://example.org/#x)"
    )
    assert link_errors(page, text) == [
        "../bench/README.md#no-such-table: no such heading",
        "no-such-page.md: no such file",
    ]
