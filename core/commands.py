"""Helpers for management commands: run a job in the foreground, recorded like any other, and the
options of a job's parameters, built from their declarations (core.job_registry.param)."""

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from core.job_registry import JobParams, Param
from core.models import Job, JobStatus
from core.services.jobs import job_create, job_execute


def job_run_here(*, params: JobParams) -> Job:
    """Create the job, run it in this process and return it; a failure becomes a CommandError."""
    return job_execute_here(job=job_create(params=params, enqueue=False))


def job_execute_here(*, job: Job) -> Job:
    """Run an existing job in this process and return it, refreshed; a failure becomes a CommandError."""
    job_execute(job_id=job.pk)
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        raise CommandError(f"job #{job.pk} {job.status}: {job.error}")
    return job


def format_report(result: dict) -> str:
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)


def job_params_arguments(
    parser: argparse.ArgumentParser,
    params: type[JobParams],
    *,
    names: Sequence[str] | None = None,
    defaults: bool = True,
    required: bool = True,
) -> None:
    """Add to ``parser`` an option for each parameter of ``params`` that its command takes (or each
    of ``names``), built from the parameter's declaration: its type, choices, default and help; a
    boolean is a flag (``--no-<name>`` when it is on by default), a list a repeatable option (or one
    comma-separated value). Each option's value lands under the parameter's name; read them back
    with :func:`job_params_from_options`. ``defaults=False``: an option not given is None (a
    command that tells given options apart from defaults); ``required=False``: none is required
    (a command whose other mode needs them not)."""
    chosen = params.command_params() if names is None else [params.param_get(name) for name in names]
    for param in chosen:
        _argument_add(parser, param, defaults=defaults, required=required)


def _argument_add(parser: argparse.ArgumentParser, param: Param, *, defaults: bool, required: bool) -> None:
    spec = param.spec
    # A required path is a positional argument unless the parameter names its option.
    option = spec.option or (param.name if spec.path and param.required else "--" + param.name.replace("_", "-"))
    kwargs: dict[str, Any] = {"help": _help(param, shown=defaults)}
    if param.item_type is bool and not param.is_list:
        kwargs["action"] = "store_false" if param.default is True else "store_true"
        if not defaults:
            kwargs["default"] = None
        parser.add_argument(option, dest=param.name, **kwargs)
        return
    if spec.path:
        kwargs["type"] = Path
    elif param.item_type in (int, float):
        kwargs["type"] = param.item_type
    if spec.choices and not spec.separator:
        kwargs["choices"] = spec.choice_values
    if param.is_list and not spec.separator:
        kwargs["action"] = "append"
        kwargs["default"] = None  # argparse would append to a default list
    elif param.required:
        kwargs["required"] = required and option.startswith("-")
    elif defaults:
        kwargs["default"] = spec.separator.join(param.default) if spec.separator else param.default
    else:
        kwargs["default"] = None
    if not option.startswith("-"):  # positional: its value lands under the parameter's name
        kwargs.pop("required", None)
        parser.add_argument(param.name, metavar=option, **kwargs)
        return
    if "choices" not in kwargs:
        kwargs["metavar"] = option.lstrip("-").replace("-", "_").upper()
    parser.add_argument(option, dest=param.name, **kwargs)


def _help(param: Param, *, shown: bool) -> str:
    """The parameter's help, with its default when it has one worth saying."""
    text = param.spec.help
    if param.spec.separator:
        text += (
            " (comma-separated)"
            if not param.spec.choices
            else f" (comma-separated: {', '.join(param.spec.choice_values)})"
        )
    if param.is_list and not param.spec.separator:
        text += " (repeat the option)"
    if shown and _default_worth_saying(param):
        default = param.spec.separator.join(param.default) if param.is_list else param.default
        text += f" (default {default})"
    return text


def _default_worth_saying(param: Param) -> bool:
    """A number, a text or a comma-separated list; not a flag's, an empty one or a repeated option's
    (its help says what none means)."""
    if param.required or isinstance(param.default, bool) or param.default in (None, ""):
        return False
    return not param.is_list or bool(param.spec.separator)


def job_params_from_options(params: type[JobParams], options: Mapping[str, Any], **given: Any) -> JobParams:
    """``params`` from a command's options (added by :func:`job_params_arguments`) and the values
    the command works out itself (``given``). An option not given takes the parameter's default; a
    path is made absolute."""
    values: dict[str, Any] = {}
    for param in params.command_params():
        if param.name in given or param.name not in options:
            continue
        value = options[param.name]
        if value is None:
            continue  # not given: the parameter's default
        if param.spec.path:
            value = str(Path(value).resolve())
        elif param.is_list and isinstance(value, str):  # one value (call_command passes it unparsed)
            separator = param.spec.separator
            value = [v.strip() for v in value.split(separator) if v.strip()] if separator else [value]
        values[param.name] = value
    return params(**values, **given)
