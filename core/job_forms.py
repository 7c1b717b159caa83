"""Form fields of the pages that start a job, built from the job kind's parameter declarations
(core.job_registry.param): the field's type, choices, initial value, whether it is required, its
label and help all come from the parameter, so a page and the command that runs the same job
cannot disagree.

A page's form subclasses :func:`job_params_form`; it may add fields that are not parameters (an
uploaded file), widgets, bounds, ordering and validation, given per field as keywords of the field
(``fields={"context_turns": {"min_value": 1}}``). A ``queryset`` there makes the field a choice among
rows whose ``to_field_name`` (``name`` unless given) is the parameter's value.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any

from django import forms
from django.db import models
from django.utils.text import capfirst

from core.job_registry import JobParams, Param


def job_param_form_field(params: type[JobParams], name: str, **overrides: Any) -> forms.Field:
    """The form field of parameter ``name`` of ``params`` (``overrides``: the field's keywords that
    the page adds, a widget or bounds)."""
    return _form_field(params.param_get(name), overrides)


def _form_field(param: Param, overrides: Mapping[str, Any]) -> forms.Field:
    kwargs: dict[str, Any] = {"help_text": capfirst(param.spec.help), "required": _required(param)}
    if param.spec.label:
        kwargs["label"] = param.spec.label
    if not param.required and param.default not in (None, ""):
        kwargs["initial"] = param.default
    kwargs.update(overrides)
    queryset = kwargs.pop("queryset", None)
    if queryset is not None:
        kwargs.setdefault("to_field_name", "name")
        kwargs.pop("initial", None)
        field_class = forms.ModelMultipleChoiceField if param.is_list else forms.ModelChoiceField
        return field_class(queryset=queryset, **kwargs)
    if param.spec.choices:
        field_class = forms.MultipleChoiceField if param.is_list else forms.ChoiceField
        return field_class(choices=param.spec.choice_pairs, **kwargs)
    field_class = {bool: forms.BooleanField, int: forms.IntegerField, float: forms.FloatField}.get(
        param.item_type, forms.CharField
    )
    if field_class is forms.BooleanField:
        kwargs["required"] = overrides.get("required", False)  # unticked is False, not missing
    return field_class(**kwargs)


def _required(param: Param) -> bool:
    """A value must be given when the parameter has no default, or one a form cannot show as
    empty (a number); an empty text, None or an empty list may be left empty."""
    if param.required:
        return True
    return param.default not in (None, "", [])


def job_params_form(params: type[JobParams], *, fields: Mapping[str, Mapping[str, Any]] | None = None):
    """A form class with one field per parameter of ``params`` that the forms ask for, built from
    its declaration; a page's form subclasses it. ``fields``: the keywords a page adds to a field."""
    fields = fields or {}
    unknown = set(fields) - {p.form_name for p in params.form_params()}
    if unknown:
        raise ValueError(f"{params.__name__}: no parameter shown on forms as {', '.join(sorted(unknown))}")
    attrs: dict[str, Any] = {p.form_name: _form_field(p, fields.get(p.form_name, {})) for p in params.form_params()}
    attrs["job_params_class"] = params
    return type(f"{params.__name__}FormBase", (JobParamsFormBase,), attrs)


class JobParamsFormBase(forms.Form):
    """The base of :func:`job_params_form`'s classes: the job's parameters from the cleaned data."""

    job_params_class: type[JobParams]

    def job_params(self, **given: Any) -> JobParams:
        """The job's parameters: those the form asks for from its cleaned data (a chosen row as its
        ``to_field_name``), the others ``given`` (an uploaded file's path, the dataset of the page)."""
        values = {}
        for param in self.job_params_class.form_params():
            value = _param_value(self.fields[param.form_name], self.cleaned_data[param.form_name])
            if value is None and param.default is not None and param.default is not dataclasses.MISSING:
                continue  # left empty: the parameter's default
            values[param.name] = value
        return self.job_params_class(**values, **given)


def _param_value(field: forms.Field, value: Any) -> Any:
    if isinstance(field, forms.ModelChoiceField):
        key = field.to_field_name or "pk"
        if isinstance(value, models.Model):
            return getattr(value, key)
        if isinstance(field, forms.ModelMultipleChoiceField):
            return [getattr(row, key) for row in value]
    if isinstance(field, forms.MultipleChoiceField):
        return list(value)
    return value
