from django import forms

from annotation.models import Dataset, Repository
from core.forms import service_check
from pairs.edits import Criterion, PairType
from pairs.job_params import BuildPairsParams
from pairs.services.building import build_repository_get, build_settings_check

default = BuildPairsParams.default

TYPE_CHOICES = [
    (PairType.CONTENT, "substituted content word (a noun, by a bigram model of the repository)"),
    (PairType.SENTENCE, "switched sentence type (declarative/interrogative, affirmative/negative)"),
    (PairType.FUNCTION, "substituted function word (a preposition or particle)"),
]
CRITERION_CHOICES = [
    (Criterion.EQUALLY_LIKELY, "equally likely (EL): the replacement fits the neighbours as well as the word"),
    (Criterion.MOST_LIKELY, "most likely (ML): the noun the neighbours make most likely"),
]


class BuildPairsForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="The pair set; run again with the same name to resume a build")
    types = forms.MultipleChoiceField(
        choices=TYPE_CHOICES, initial=list(PairType.ALL), widget=forms.CheckboxSelectMultiple
    )
    criteria = forms.MultipleChoiceField(
        choices=CRITERION_CHOICES,
        initial=list(Criterion.ALL),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Substituted content words only",
    )
    repository = forms.ModelChoiceField(
        queryset=Repository.objects.order_by("name"),
        required=False,
        to_field_name="name",
        help_text="The bigram model and the noun vocabulary come from it (substituted content words)",
    )
    per_question = forms.IntegerField(
        min_value=1, max_value=10, initial=default("per_question"), help_text="Pairs per question and type"
    )
    seed = forms.IntegerField(min_value=0, initial=default("seed"))

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

    def job_params(self, *, dataset: Dataset) -> BuildPairsParams:
        d = self.cleaned_data
        return BuildPairsParams(
            dataset=dataset.name,
            name=d["name"],
            types=list(d["types"]),
            criteria=list(d["criteria"]),
            per_question=d["per_question"],
            seed=d["seed"],
            repository=d["repository"].name if d["repository"] else "",
        )


class PairImportForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="A new pair set")
    file = forms.FileField(help_text="JSON lines, one pair per line (docs/pairs.md)")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class PairEditForm(forms.Form):
    incorrect = forms.CharField(max_length=4000, strip=True)
