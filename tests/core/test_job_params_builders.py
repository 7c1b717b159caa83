"""The forms and command options of a job kind, built from its parameter declarations
(core.job_registry.param, core.job_forms, core.commands)."""

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from django import forms

from core.commands import job_params_arguments, job_params_from_options
from core.job_forms import job_param_form_field, job_params_form
from core.job_registry import JobParams, param


@dataclass(frozen=True, kw_only=True)
class BuilderParams(JobParams):
    kind: ClassVar[str] = "test_builders"
    label: ClassVar[str] = "builders"

    path: str = param(help="the input file", path=True, form=False)
    dataset: str = param(help="dataset name")
    format: str = param("lines", help="the file's format", choices=["lines", "jsonl"])
    count: int = param(3, help="how many", label="How many")
    ratio: float = param(0.5, help="a share")
    verbose: bool = param(False, help="say more")
    with_pools: bool = param(True, help="skip the pools", option="--no-pools")
    exclude: list[str] = param(default_factory=list, help="datasets to leave out", option="--exclude-dataset")
    types: list[str] = param(
        default_factory=lambda: ["a", "b"], help="the kinds", choices=[("a", "kind A"), ("b", "kind B")], separator=","
    )
    limit: int | None = param(None, help="at most this many", option="--max")
    seed: int = param(0, help="seed", form=False, command=False)


def parser_for(params=BuilderParams, **kwargs) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    job_params_arguments(parser, params, **kwargs)
    return parser


def actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {action.dest: action for action in parser._actions if action.dest != "help"}


def test_options_take_names_types_defaults_and_help_from_the_declarations():
    options = actions(parser_for())
    assert list(options) == [
        "path",
        "dataset",
        "format",
        "count",
        "ratio",
        "verbose",
        "with_pools",
        "exclude",
        "types",
        "limit",
    ]
    assert options["path"].option_strings == []  # a required path is positional
    assert options["path"].type is Path
    assert (options["dataset"].option_strings, options["dataset"].required) == (["--dataset"], True)
    assert options["count"].type is int and options["count"].default == 3
    assert options["ratio"].type is float and options["ratio"].default == 0.5
    assert options["count"].help == "how many (default 3)"
    assert options["dataset"].help == "dataset name"
    assert options["exclude"].option_strings == ["--exclude-dataset"]
    assert options["limit"].option_strings == ["--max"] and options["limit"].default is None
    assert "seed" not in options  # command=False


def test_choices_are_checked_by_the_option():
    parser = parser_for()
    assert actions(parser)["format"].choices == ["lines", "jsonl"]
    with pytest.raises(argparse.ArgumentError, match="invalid choice"):
        parser.parse_args(["f.txt", "--dataset", "d", "--format", "csv"])


def test_a_required_parameter_is_a_required_option(capsys):
    with pytest.raises(SystemExit):
        parser_for().parse_args(["f.txt"])
    assert "the following arguments are required: --dataset" in capsys.readouterr().err
    assert actions(parser_for(required=False))["dataset"].required is False


def test_booleans_are_flags_and_one_on_by_default_is_turned_off():
    parser = parser_for()
    assert isinstance(actions(parser)["verbose"], argparse._StoreTrueAction)
    assert isinstance(actions(parser)["with_pools"], argparse._StoreFalseAction)
    given = vars(parser.parse_args(["f.txt", "--dataset", "d", "--verbose", "--no-pools"]))
    assert (given["verbose"], given["with_pools"]) == (True, False)
    left = vars(parser.parse_args(["f.txt", "--dataset", "d"]))
    assert (left["verbose"], left["with_pools"]) == (False, True)


def test_options_become_the_parameters(tmp_path):
    parser = parser_for()
    given = vars(
        parser.parse_args(
            [str(tmp_path / "f.txt"), "--dataset", "d", "--count", "5", "--exclude-dataset", "x"]
            + ["--exclude-dataset", "y", "--types", "b, a", "--max", "7"]
        )
    )
    params = job_params_from_options(BuilderParams, given, seed=4)
    assert params == BuilderParams(
        path=str(tmp_path / "f.txt"),
        dataset="d",
        count=5,
        exclude=["x", "y"],
        types=["b", "a"],
        limit=7,
        seed=4,
    )


def test_options_left_out_take_the_declared_defaults():
    params = job_params_from_options(BuilderParams, vars(parser_for().parse_args(["f.txt", "--dataset", "d"])))
    assert params.path == str(Path("f.txt").resolve())  # made absolute
    assert (params.exclude, params.types, params.format, params.limit) == ([], ["a", "b"], "lines", None)


def test_a_list_given_one_value_unparsed_is_a_list_of_it():
    # call_command("build_indexes", only="lexical") sets the value without parsing it
    given = {"path": "f.txt", "dataset": "d", "exclude": "x", "types": "a,b"}
    params = job_params_from_options(BuilderParams, given)
    assert (params.exclude, params.types) == (["x"], ["a", "b"])


def test_without_defaults_an_option_not_given_is_none():
    given = vars(parser_for(defaults=False).parse_args(["f.txt", "--dataset", "d"]))
    assert given["count"] is None and given["verbose"] is None
    assert job_params_from_options(BuilderParams, given).count == 3


def test_the_help_of_a_list_says_how_to_give_it():
    options = actions(parser_for())
    assert options["exclude"].help == "datasets to leave out (repeat the option)"
    assert options["types"].help == "the kinds (comma-separated: a, b) (default a,b)"


def test_form_fields_take_types_initial_values_help_and_required_from_the_declarations():
    form = job_params_form(BuilderParams)()
    fields = form.fields
    assert list(fields) == ["dataset", "format", "count", "ratio", "verbose", "with_pools", "exclude", "types", "limit"]
    assert type(fields["dataset"]) is forms.CharField and fields["dataset"].required
    assert fields["dataset"].help_text == "Dataset name"  # capitalised
    assert type(fields["count"]) is forms.IntegerField and fields["count"].initial == 3
    assert fields["count"].label == "How many"
    assert type(fields["ratio"]) is forms.FloatField and fields["ratio"].initial == 0.5
    assert type(fields["verbose"]) is forms.BooleanField and not fields["verbose"].required
    assert fields["with_pools"].initial is True
    assert type(fields["format"]) is forms.ChoiceField and fields["format"].initial == "lines"
    assert list(fields["format"].choices) == [("lines", "lines"), ("jsonl", "jsonl")]
    assert type(fields["types"]) is forms.MultipleChoiceField
    assert list(fields["types"].choices) == [("a", "kind A"), ("b", "kind B")] and fields["types"].initial == ["a", "b"]
    assert type(fields["exclude"]) is forms.CharField and not fields["exclude"].required  # empty list: may be empty
    assert type(fields["limit"]) is forms.IntegerField and not fields["limit"].required  # None: may be empty
    assert "path" not in fields and "seed" not in fields  # form=False


def test_a_page_adds_widgets_and_bounds_to_a_field_and_may_not_name_another():
    form_class = job_params_form(BuilderParams, fields={"count": {"min_value": 1, "widget": forms.HiddenInput}})
    assert form_class.base_fields["count"].min_value == 1
    assert isinstance(form_class.base_fields["count"].widget, forms.HiddenInput)
    with pytest.raises(ValueError, match="seed"):
        job_params_form(BuilderParams, fields={"seed": {}})


def test_a_form_gives_the_parameters_and_the_page_the_rest():
    form_class = job_params_form(BuilderParams, fields={"exclude": {"required": False}})
    form = form_class(
        {"dataset": "d", "format": "jsonl", "count": "4", "ratio": "0.25", "types": ["b"], "limit": "", "exclude": ""}
    )
    assert form.is_valid(), form.errors
    form.cleaned_data["exclude"] = ["x"]  # a list field of a page is a multiple choice among rows
    params = form.job_params(path="/tmp/f.txt", seed=2)
    assert params == BuilderParams(
        path="/tmp/f.txt",
        dataset="d",
        format="jsonl",
        count=4,
        ratio=0.25,
        verbose=False,
        with_pools=False,  # an unticked box
        exclude=["x"],
        types=["b"],
        limit=None,
        seed=2,
    )


def test_a_form_refuses_a_value_outside_the_choices_and_a_missing_required_one():
    form = job_params_form(BuilderParams)({"format": "csv", "count": "1", "ratio": "1", "types": ["a"]})
    assert not form.is_valid()
    assert set(form.errors) == {"dataset", "format"}


def test_one_field_for_another_form():
    field = job_param_form_field(BuilderParams, "count", required=False)
    assert (type(field), field.initial, field.required, field.help_text) == (forms.IntegerField, 3, False, "How many")


def test_a_field_declared_without_param_is_refused():
    @dataclass(frozen=True, kw_only=True)
    class Undeclared(JobParams):
        kind: ClassVar[str] = "test_undeclared"
        label: ClassVar[str] = "undeclared"
        name: str = dataclasses.field(default="x")

    with pytest.raises(TypeError, match="Undeclared.name"):
        Undeclared.params()
