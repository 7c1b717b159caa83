"""Forms ask the services: a rule lives in its service, and a form shows the service's UserError
as its own ValidationError (beside the field, before a background job is started)."""

from collections.abc import Callable
from typing import TypeVar

from django import forms

from core.errors import UserError

T = TypeVar("T")


def service_check(check: Callable[..., T], /, **kwargs) -> T:
    """``check(**kwargs)``, its UserError raised as a forms.ValidationError."""
    try:
        return check(**kwargs)
    except UserError as exc:
        raise forms.ValidationError(str(exc)) from None


def form_error_text(form: forms.Form) -> str:
    """Every error of a bound form once, on one line (a page's error message)."""
    return "; ".join(dict.fromkeys(str(error) for errors in form.errors.values() for error in errors))
