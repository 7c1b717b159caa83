from django import forms

from annotation.models import Dataset
from core.forms import service_check
from core.hub import model_name_check
from negatives.demo_mlm import mlm_default
from negatives.job_params import GenerateNegativesParams
from negatives.manipulation import ManipulationSettings
from negatives.services.generation import settings_check

default = GenerateNegativesParams.default


class GenerateNegativesForm(forms.Form):
    mlm = forms.CharField(
        required=False,
        label="Masked LM",
        help_text="A local model folder or a Hugging Face model id (org/name, optionally @revision: fetched by the "
        "job into the Hugging Face cache, safetensors weights only); empty: the WELLCHOSEN_MLM_MODEL setting, or "
        "while it is unset the demo's toy masked LM (trained by load_demo).",
    )
    per_question = forms.IntegerField(
        min_value=1,
        max_value=20,
        initial=default("per_question"),
        help_text="The best replacement first, then seeded samples from each word's top k",
    )
    threshold = forms.FloatField(
        initial=default("threshold"),
        help_text="Replace a word when log P(word | context, response) - log P(word | response) exceeds this",
    )
    seed = forms.IntegerField(min_value=0, initial=default("seed"))
    min_words = forms.IntegerField(min_value=1, initial=default("min_words"), help_text="Skip shorter ground truths")
    max_mask_share = forms.FloatField(
        min_value=0.01,
        max_value=1,
        initial=default("max_mask_share"),
        help_text="Replace at most this share of a response's words (1: every selected word, as the paper)",
    )
    replace_with_context = forms.BooleanField(
        required=False, help_text="Let the replacement see the context (an ablation; the paper does not)"
    )
    top_k = forms.IntegerField(min_value=1, max_value=1000, initial=default("top_k"))

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
        fields = ("threshold", "per_question", "min_words", "max_mask_share", "replace_with_context", "top_k", "seed")
        return {name: d[name] for name in fields}

    def job_params(self, *, dataset: Dataset) -> GenerateNegativesParams:
        d = self.cleaned_data
        return GenerateNegativesParams(dataset=dataset.name, mlm=d["mlm"], **self._settings(d))
