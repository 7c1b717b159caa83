from django import forms

from annotation.models import Dataset, Repository
from core.forms import service_check
from core.job_forms import job_params_form
from core.normalisers import DEFAULT_NORMALISER
from retrieval.job_params import BuildPoolsParams, ImportRepositoryParams
from retrieval.services.pools import pool_sizes_check
from retrieval.services.repository_import import repository_name_check, repository_normaliser_check


class RepositoryImportForm(
    job_params_form(
        ImportRepositoryParams,
        fields={
            "min_tokens": {"min_value": 0},
            "exclude_datasets": {"queryset": Dataset.objects.order_by("name")},
            "normaliser": {"required": False},
        },
    )
):
    """``job_params(path=...)``: the job's parameters, with the uploaded file stored at ``path``."""

    file = forms.FileField(help_text="One utterance per line (.gz too), Cornell movie_lines.txt, or DailyDialog")
    field_order = ["file", "name", "format", "min_tokens", "exclude_datasets", "normaliser"]

    def clean_name(self):
        return service_check(repository_name_check, name=self.cleaned_data["name"])

    def clean_normaliser(self):
        return self.cleaned_data["normaliser"] or DEFAULT_NORMALISER

    def clean(self):
        data = super().clean()
        if data.get("name") and data.get("normaliser"):
            service_check(repository_normaliser_check, name=data["name"], normaliser=data["normaliser"])
        return data


class PoolForm(
    job_params_form(
        BuildPoolsParams,
        fields={
            "repository": {"queryset": Repository.objects.order_by("name")},
            "lexical": {"min_value": 0, "max_value": 100},
            "dense": {"min_value": 0, "max_value": 100},
            "min_tokens": {"min_value": 0},
            "paraphrase_threshold": {"min_value": 0, "max_value": 1.01},
            "exclude_datasets": {"queryset": Dataset.objects.order_by("name")},
        },
    )
):
    """``job_params(dataset=...)``: the job's parameters, for the dataset of the page."""

    def clean(self):
        data = super().clean()
        if data.get("lexical") is not None and data.get("dense") is not None:
            service_check(pool_sizes_check, lexical=data["lexical"], dense=data["dense"])
        return data
