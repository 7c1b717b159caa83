"""Every job kind's pages and command ask for exactly its parameters, as declared: a parameter
added to a kind, or a field or option written by hand beside the declaration, fails here."""

import argparse
import importlib

import pytest
from django import forms
from django.apps import apps
from django.core.management import get_commands, load_command_class

from core.commands import job_params_arguments
from core.job_forms import JobParamsFormBase, job_param_form_field
from core.job_registry import JobParams, job_kinds_all

# The commands that run each kind ("crowd publish": a subcommand). A new kind is added here.
KIND_COMMANDS = {
    "audit_shortcuts": ["audit_shortcuts"],
    "build_indexes": ["build_indexes"],
    "build_pairs": ["build_pairs"],
    "build_pools": ["retrieve"],
    "build_testset": ["build_testset", "build_release"],
    "campaign": ["campaign run"],
    "crowd_publish": ["crowd publish"],
    "crowd_sync": ["crowd sync"],
    "evaluate": ["evaluate"],
    "evaluate_pairs": ["evaluate_pairs"],
    "generate": ["generate"],
    "generate_negatives": ["generate_negatives"],
    "import_dialogues": ["import_dialogues"],
    "import_pairs": ["import_pairs"],
    "import_repository": ["import_repository"],
    "import_scores": ["import_scores"],
    "import_testset": ["import_testset"],
    "import_testset_hf": ["import_testset"],
    "load_demo": ["load_demo"],
    "quality_refresh": [],  # the dashboard's button and the services start it
}


def kinds() -> dict[str, type[JobParams]]:
    return {kind.name: kind.params for kind in job_kinds_all()}


def command_parser(name: str) -> argparse.ArgumentParser:
    command, *sub = name.split()
    parser = load_command_class(get_commands()[command], command).create_parser("manage.py", command)
    for part in sub:
        (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = subparsers.choices[part]
    return parser


def page_forms() -> dict[str, list[type[JobParamsFormBase]]]:
    """The forms of the pages that start each kind, every app's forms module imported."""
    for config in apps.get_app_configs():
        try:
            importlib.import_module(f"{config.name}.forms")
        except ModuleNotFoundError:
            pass
    found: dict[str, list] = {}
    todo = list(JobParamsFormBase.__subclasses__())
    while todo:
        form_class = todo.pop()
        todo += form_class.__subclasses__()
        if "job_params_class" not in form_class.__dict__:  # a page's form, not the built base
            found.setdefault(form_class.job_params_class.kind, []).append(form_class)
    return found


def test_every_kind_is_listed_with_its_commands():
    assert set(KIND_COMMANDS) == set(kinds())


@pytest.mark.parametrize("kind", sorted(KIND_COMMANDS))
def test_the_commands_of_a_kind_take_exactly_its_parameters_as_declared(kind):
    params = kinds()[kind]
    declared = {p.name: p for p in params.command_params()}
    if not KIND_COMMANDS[kind]:
        assert not declared, f"{kind}: parameters taken by a command, but no command runs it"
    others = {p.name for p in params.params()} - set(declared)
    reference = {action.dest: action for action in _built(params)._actions}
    for name in KIND_COMMANDS[kind]:
        options = {action.dest: action for action in command_parser(name)._actions}
        assert set(declared) <= set(options), f"{name}: no option for {sorted(set(declared) - set(options))}"
        assert not others & set(options), f"{name}: options for parameters it does not take"
        for dest, param in declared.items():
            action, built = options[dest], reference[dest]
            assert (type(action), action.option_strings, action.type, action.choices) == (
                type(built),
                built.option_strings,
                built.type,
                built.choices,
            ), f"{name} {dest}"
            assert action.help.startswith(param.spec.help), f"{name} {dest}: help not the declared one"
            assert action.default in (built.default, None), f"{name} {dest}: default not the declared one"


def _built(params: type[JobParams]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    job_params_arguments(parser, params)
    return parser


@pytest.mark.parametrize("kind", sorted(KIND_COMMANDS))
def test_the_forms_of_a_kind_ask_for_exactly_its_parameters_as_declared(kind):
    params = kinds()[kind]
    declared = {p.form_name: p for p in params.form_params()}
    form_classes = page_forms().get(kind, [])
    if not form_classes:
        assert not declared, f"{kind}: parameters asked for by forms, but no page's form starts it"
    others = {name for p in params.params() for name in (p.name, p.form_name)} - set(declared)
    for form_class in form_classes:
        fields = form_class.base_fields
        assert set(declared) <= set(fields), f"{form_class.__name__}: no field for {set(declared) - set(fields)}"
        assert not others & set(fields), f"{form_class.__name__}: fields for parameters it does not ask for"
        for name, param in declared.items():
            field, built = fields[name], job_param_form_field(params, param.name)
            where = f"{form_class.__name__}.{name}"
            assert (field.help_text, field.label) == (built.help_text, built.label), where
            if isinstance(field, forms.ModelChoiceField):  # a choice among rows: their names
                assert param.item_type is type(built.initial) or built.initial is None or param.is_list, where
                continue
            assert type(field) is type(built), where
            assert field.initial == built.initial, where
            assert getattr(field, "choices", None) == getattr(built, "choices", None), where


def test_the_pages_and_commands_found_are_the_ones_expected():
    """The discovery above sees the pages' forms (a form moved out of a forms module would be
    missed)."""
    found = {kind: sorted(form.__name__ for form in forms_) for kind, forms_ in page_forms().items()}
    assert found == {
        "audit_shortcuts": ["AuditShortcutsForm"],
        "build_pairs": ["BuildPairsForm"],
        "build_pools": ["PoolForm"],
        "build_testset": ["BuildTestsetForm"],
        "generate_negatives": ["GenerateNegativesForm"],
        "import_dialogues": ["DialogueImportForm"],
        "import_pairs": ["PairImportForm"],
        "import_repository": ["RepositoryImportForm"],
        "import_scores": ["ScoreImportForm"],
        "import_testset": ["TestsetImportForm"],
    }
