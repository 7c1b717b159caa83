from django import forms

from annotation.models import Dataset, FilterRules
from annotation.selectors import filter_preview
from annotation.services.datasets import dataset_name_check
from core.forms import service_check
from testsets.job_params import BuildTestsetParams, ImportTestsetParams
from testsets.services.build import testset_name_check


class TestsetImportForm(forms.Form):
    tsv = forms.FileField(
        label="Test set TSV", help_text="context turns, ground truth, false candidates; tab-separated"
    )
    scores = forms.FileField(required=False, label="human_scores.jsonl", help_text="optional, aligned with the TSV")
    dataset = forms.CharField()
    context_turns = forms.IntegerField(min_value=1, max_value=20, initial=ImportTestsetParams.default("context_turns"))

    def clean_dataset(self):
        return service_check(dataset_name_check, name=self.cleaned_data["dataset"])

    def job_params(self, *, path: str, scores_path: str | None) -> ImportTestsetParams:
        d = self.cleaned_data
        return ImportTestsetParams(
            path=path, scores_path=scores_path, dataset=d["dataset"], context_turns=d["context_turns"]
        )


class BuildTestsetForm(forms.Form):
    name = forms.CharField(help_text="Name of the new, frozen test set")
    false_per_question = forms.IntegerField(
        min_value=1,
        max_value=20,
        initial=BuildTestsetParams.default("false_per_question"),
        label="False candidates per question",
    )
    seed = forms.IntegerField(initial=BuildTestsetParams.default("seed"))
    rules = forms.ModelChoiceField(queryset=FilterRules.objects.order_by("-version"), empty_label=None)

    def __init__(self, *args, dataset: Dataset | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset

    def clean_name(self):
        return service_check(testset_name_check, name=self.cleaned_data["name"])

    def clean(self):
        """Refuse a build the filter preview already knows yields no question, with its reason
        (nothing is queued)."""
        cleaned = super().clean()
        rules, k = cleaned.get("rules"), cleaned.get("false_per_question")
        if self.dataset is not None and rules is not None and k is not None:
            reason = filter_preview(dataset=self.dataset, rules=rules, false_per_question=k).nothing_buildable_reason()
            if reason:
                raise forms.ValidationError(reason, code="nothing_buildable")
        return cleaned

    def job_params(self, *, dataset: Dataset) -> BuildTestsetParams:
        d = self.cleaned_data
        return BuildTestsetParams(
            dataset=dataset.name,
            name=d["name"],
            false_per_question=d["false_per_question"],
            seed=d["seed"],
            rules_version=d["rules"].version,
        )
