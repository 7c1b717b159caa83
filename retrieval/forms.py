from django import forms

from annotation.models import Dataset, Repository
from core.forms import service_check
from retrieval.job_params import BuildPoolsParams, ImportRepositoryParams
from retrieval.services.pools import pool_sizes_check
from retrieval.services.repository_import import FORMATS, repository_name_check


class RepositoryImportForm(forms.Form):
    file = forms.FileField(help_text="One utterance per line (.gz too), Cornell movie_lines.txt, or DailyDialog")
    name = forms.CharField(help_text="New repository, or an existing one to add to")
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial=ImportRepositoryParams.default("format"))
    min_tokens = forms.IntegerField(
        min_value=0, initial=ImportRepositoryParams.default("min_tokens"), help_text="Skip utterances with fewer words"
    )
    exclude_datasets = forms.ModelMultipleChoiceField(
        queryset=Dataset.objects.order_by("name"),
        required=False,
        to_field_name="name",
        help_text="Leave out every utterance that occurs in these datasets",
    )

    def clean_name(self):
        return service_check(repository_name_check, name=self.cleaned_data["name"])

    def job_params(self, *, path: str) -> ImportRepositoryParams:
        """The job's parameters, with the uploaded file stored at ``path``."""
        d = self.cleaned_data
        return ImportRepositoryParams(
            path=path,
            name=d["name"],
            format=d["format"],
            min_tokens=d["min_tokens"],
            exclude_datasets=[ds.name for ds in d["exclude_datasets"]],
        )


class PoolForm(forms.Form):
    repository = forms.ModelChoiceField(queryset=Repository.objects.order_by("name"), to_field_name="name")
    lexical = forms.IntegerField(
        min_value=0, max_value=100, initial=BuildPoolsParams.default("lexical"), label="BM25 candidates"
    )
    dense = forms.IntegerField(
        min_value=0, max_value=100, initial=BuildPoolsParams.default("dense"), label="Embedding candidates"
    )
    min_tokens = forms.IntegerField(
        min_value=0, initial=BuildPoolsParams.default("min_tokens"), help_text="Skip shorter utterances"
    )
    paraphrase_threshold = forms.FloatField(
        min_value=0,
        max_value=1.01,
        initial=BuildPoolsParams.default("paraphrase_threshold"),
        help_text="Skip utterances at least this similar (cosine) to the ground truth",
    )
    exclude_datasets = forms.ModelMultipleChoiceField(
        queryset=Dataset.objects.order_by("name"),
        required=False,
        to_field_name="name",
        help_text="Never take an utterance that occurs in these datasets",
    )

    def clean(self):
        data = super().clean()
        if data.get("lexical") is not None and data.get("dense") is not None:
            service_check(pool_sizes_check, lexical=data["lexical"], dense=data["dense"])
        return data

    def job_params(self, *, dataset: Dataset) -> BuildPoolsParams:
        d = self.cleaned_data
        return BuildPoolsParams(
            dataset=dataset.name,
            repository=d["repository"].name,
            lexical=d["lexical"],
            dense=d["dense"],
            min_tokens=d["min_tokens"],
            paraphrase_threshold=d["paraphrase_threshold"],
            exclude_datasets=[ds.name for ds in d["exclude_datasets"]],
        )
