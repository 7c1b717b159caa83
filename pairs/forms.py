from django import forms
from django.core.validators import validate_slug

from annotation.models import Repository
from core.forms import service_check
from core.job_forms import job_params_form
from pairs.edits import PairType
from pairs.job_params import BuildPairsParams, ImportPairsParams
from pairs.services.building import build_repository_get, build_settings_check

SET_NAME = {"max_length": 100, "validators": [validate_slug]}  # a forms.SlugField's check


class BuildPairsForm(
    job_params_form(
        BuildPairsParams,
        fields={
            "name": SET_NAME,
            "types": {"widget": forms.CheckboxSelectMultiple},
            "criteria": {"widget": forms.CheckboxSelectMultiple, "required": False},
            "repository": {"queryset": Repository.objects.order_by("name"), "required": False},
            "per_question": {"min_value": 1, "max_value": 10},
            "seed": {"min_value": 0},
        },
    )
):
    """``job_params(dataset=...)``: the job's parameters, for the dataset of the page."""

    field_order = ["name", "types", "criteria", "repository", "per_question", "seed"]

    def clean(self):
        data = super().clean()
        if not self.errors:
            service_check(
                build_settings_check,
                types=data["types"],
                criteria=data["criteria"],
                per_question=data["per_question"],
            )
            if data["repository"] is None:
                service_check(build_repository_get, name="", needed=PairType.CONTENT in data["types"])
        return data


class PairImportForm(
    job_params_form(
        ImportPairsParams,
        fields={"name": SET_NAME, "description": {"widget": forms.Textarea(attrs={"rows": 2})}},
    )
):
    """``job_params(path=...)``: the job's parameters, with the uploaded file stored at ``path``."""

    file = forms.FileField(help_text="JSON lines, one pair per line (docs/pairs.md)")
    field_order = ["name", "file", "description"]


class PairEditForm(forms.Form):
    incorrect = forms.CharField(max_length=4000, strip=True)
