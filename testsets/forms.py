from django import forms

from annotation.models import Dataset, FilterRules
from annotation.selectors import filter_preview
from annotation.services.datasets import dataset_name_check
from core.forms import service_check
from core.job_forms import job_params_form
from testsets.job_params import AuditShortcutsParams, BuildTestsetParams, ImportTestsetParams
from testsets.services.build import testset_name_check
from testsets.services.shortcut_audit import shortcut_audit_options_check

CONTEXT_TURNS_BOUNDS = {"min_value": 1, "max_value": 20}
FALSE_PER_QUESTION_BOUNDS = {"min_value": 1, "max_value": 20}
# left empty: the default rounds (a form posted before the field existed still builds)
SHORTCUT_ROUNDS_BOUNDS = {"min_value": 0, "max_value": 20, "required": False}


class TestsetImportForm(job_params_form(ImportTestsetParams, fields={"context_turns": CONTEXT_TURNS_BOUNDS})):
    """``job_params(path=..., scores_path=...)``: the job's parameters, with the uploaded files."""

    tsv = forms.FileField(
        label="Test set TSV", help_text="context turns, ground truth, false candidates; tab-separated"
    )
    scores = forms.FileField(required=False, label="human_scores.jsonl", help_text="optional, aligned with the TSV")
    field_order = ["tsv", "scores", "dataset", "context_turns"]

    def clean_dataset(self):
        return service_check(dataset_name_check, name=self.cleaned_data["dataset"])


class BuildTestsetForm(
    job_params_form(
        BuildTestsetParams,
        fields={
            "false_per_question": FALSE_PER_QUESTION_BOUNDS,
            "shortcut_rounds": SHORTCUT_ROUNDS_BOUNDS,
            "rules": {
                "queryset": FilterRules.objects.order_by("-version"),
                "to_field_name": "version",
                "empty_label": None,
                "required": True,
            },
        },
    )
):
    """``job_params(dataset=...)``: the job's parameters, for the dataset of the page."""

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


class AuditShortcutsForm(job_params_form(AuditShortcutsParams, fields={"folds": {"min_value": 2, "max_value": 20}})):
    """``job_params(dataset=...)`` or ``job_params(testset=...)``: the audit of the page's pools or test set."""

    def clean(self):
        """Refuse options a baseline cannot run with (an unknown system), before anything is queued."""
        cleaned = super().clean()
        if not self.errors:
            service_check(
                shortcut_audit_options_check,
                system=cleaned.get("system") or None,
                folds=cleaned["folds"],
                seed=cleaned["seed"],
            )
        return cleaned
