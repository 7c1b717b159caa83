from django import forms

from annotation.job_params import BuildTestsetParams, ImportDialoguesParams, ImportTestsetParams
from annotation.models import Dataset, FilterRules
from annotation.services.datasets import dataset_name_check
from annotation.services.dialogue_import import FORMATS as DIALOGUE_FORMATS
from annotation.services.testset_build import testset_name_check
from core.forms import service_check


class DatasetAdminForm(forms.ModelForm):
    """The dataset admin's add and change form; dataset_save keeps the rules on saving."""

    class Meta:
        model = Dataset
        fields = "__all__"

    def clean_name(self):
        return service_check(dataset_name_check, name=self.cleaned_data["name"])


class DialogueImportForm(forms.Form):
    file = forms.FileField(help_text='DailyDialog dialogues_*.txt, or JSONL with {"context": [...], "response": "..."}')
    format = forms.ChoiceField(choices=[(f, f) for f in DIALOGUE_FORMATS])
    dataset = forms.CharField(help_text="New or existing dataset name")
    context_turns = forms.IntegerField(
        min_value=1, max_value=20, initial=ImportDialoguesParams.default("context_turns")
    )

    def clean_dataset(self):
        return service_check(dataset_name_check, name=self.cleaned_data["dataset"])

    def job_params(self, *, path: str) -> ImportDialoguesParams:
        """The job's parameters, with the uploaded file stored at ``path``."""
        d = self.cleaned_data
        return ImportDialoguesParams(
            path=path, format=d["format"], dataset=d["dataset"], context_turns=d["context_turns"]
        )


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


class ScoreImportForm(forms.Form):
    file = forms.FileField(help_text="CSV with the header question_id,candidate_id,annotator,score")


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

    def clean_name(self):
        return service_check(testset_name_check, name=self.cleaned_data["name"])

    def job_params(self, *, dataset: Dataset) -> BuildTestsetParams:
        d = self.cleaned_data
        return BuildTestsetParams(
            dataset=dataset.name,
            name=d["name"],
            false_per_question=d["false_per_question"],
            seed=d["seed"],
            rules_version=d["rules"].version,
        )


class PreviewForm(forms.Form):
    rules = forms.ModelChoiceField(queryset=FilterRules.objects.order_by("-version"), required=False)
    false_per_question = forms.IntegerField(
        min_value=1, max_value=20, initial=BuildTestsetParams.default("false_per_question"), required=False
    )
