from core.forms import service_check
from core.hub import model_name_check
from core.job_forms import job_params_form
from negatives.demo_mlm import mlm_default
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings
from negatives.services.generation import settings_check


class GenerateNegativesForm(
    job_params_form(
        GenerateNegativesParams,
        fields={
            "per_question": {"min_value": 1, "max_value": 20},
            "seed": {"min_value": 0},
            "min_words": {"min_value": 1},
            "max_mask_share": {"min_value": 0.01, "max_value": 1},
            "top_k": {"min_value": 1, "max_value": 1000},
        },
    )
):
    """``job_params(dataset=...)``: the job's parameters, for the dataset of the page."""

    def clean_mlm(self):
        name = self.cleaned_data["mlm"].strip()
        # a hub id is resolved (perhaps downloaded) by the job, not in this request
        model, setting = (name, "masked LM") if name else mlm_default()
        service_check(model_name_check, name=model, setting=setting)
        return name

    def clean(self):
        data = super().clean()
        if not self.errors:
            service_check(settings_check, settings=ManipulationSettings(**self._settings(data)))
        return data

    @staticmethod
    def _settings(d: dict) -> dict:
        fields = (
            "threshold",
            "per_question",
            "min_words",
            "max_mask_share",
            "replace_with_context",
            "punctuation",
            "top_k",
            "seed",
        )
        return {name: d[name] for name in fields}
