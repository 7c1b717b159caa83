import re

from django import forms

from annotation.job_params import ImportDialoguesParams, ImportScoresParams
from annotation.models import Annotator, AnnotatorProvider, Dataset, FilterRules
from annotation.rules import FALSE_PER_QUESTION
from annotation.services.datasets import dataset_name_check, dataset_normaliser_check
from annotation.services.invitations import INVITE_DAYS, INVITE_MAX_USES, invitation_limits_check, max_units_check
from annotation.services.submission import MAX_DURATION_MS, Answer, duration_check
from core.forms import service_check
from core.job_forms import job_params_form
from core.normalisers import DEFAULT_NORMALISER


class DatasetAdminForm(forms.ModelForm):
    """The dataset admin's add and change form; dataset_save keeps the rules on saving."""

    class Meta:
        model = Dataset
        fields = "__all__"

    def clean_name(self):
        return service_check(dataset_name_check, name=self.cleaned_data["name"])


CONTEXT_TURNS_BOUNDS = {"min_value": 1, "max_value": 20}


class DialogueImportForm(
    job_params_form(
        ImportDialoguesParams,
        fields={
            "context_turns": CONTEXT_TURNS_BOUNDS,
            "max_dialogues": {"min_value": 1},
            "normaliser": {"required": False},
        },
    )
):
    """``job_params(path=...)``: the job's parameters, with the uploaded file stored at ``path``."""

    file = forms.FileField(help_text='DailyDialog dialogues_*.txt, or JSONL with {"context": [...], "response": "..."}')
    field_order = ["file", "format", "dataset", "context_turns", "max_dialogues", "normaliser"]

    def clean_dataset(self):
        return service_check(dataset_name_check, name=self.cleaned_data["dataset"])

    def clean_normaliser(self):
        return self.cleaned_data["normaliser"] or DEFAULT_NORMALISER

    def clean(self):
        data = super().clean()
        if data.get("dataset") and data.get("normaliser"):
            service_check(dataset_normaliser_check, name=data["dataset"], normaliser=data["normaliser"])
        return data


class ScoreImportForm(job_params_form(ImportScoresParams)):
    """``job_params(path=...)``: the job's parameters, with the uploaded file stored at ``path``."""

    file = forms.FileField(help_text="CSV with the header question_id,candidate_id,annotator,score")


class PreviewForm(forms.Form):
    rules = forms.ModelChoiceField(queryset=FilterRules.objects.order_by("-version"), required=False)
    false_per_question = forms.IntegerField(min_value=1, max_value=20, initial=FALSE_PER_QUESTION, required=False)


class InviteForm(forms.Form):
    """The dashboard's invitation: an account (a user name, an optional cap on units) or a sign-up
    link (how many accounts it may make, for how many days, whom it is for)."""

    kind = forms.ChoiceField(choices=[("account", "account"), ("link", "link")], required=False)
    username = forms.CharField(required=False, max_length=150, strip=False)  # invitations check the name
    max_units = forms.IntegerField(
        required=False, error_messages={"invalid": "the cap must be a whole number of units, or empty for none"}
    )
    max_uses = forms.IntegerField(
        required=False, error_messages={"invalid": "the accounts a link makes must be a whole number"}
    )
    days = forms.IntegerField(
        required=False, error_messages={"invalid": "the days a link is valid must be a whole number"}
    )
    label = forms.CharField(required=False, max_length=200)

    def clean_max_units(self):
        return service_check(max_units_check, max_units=self.cleaned_data["max_units"])

    def clean(self):
        data = super().clean()
        if data.get("kind") == "link" and not self.errors:
            data["max_uses"] = INVITE_MAX_USES if data.get("max_uses") is None else data["max_uses"]
            data["days"] = INVITE_DAYS if data.get("days") is None else data["days"]
            service_check(invitation_limits_check, max_uses=data["max_uses"], days=data["days"])
        return data


class MembersAddForm(forms.Form):
    """The dashboard's "add members": existing annotator accounts and an optional cap on units."""

    annotators = forms.ModelMultipleChoiceField(
        queryset=Annotator.objects.filter(provider=AnnotatorProvider.INTERNAL),
        error_messages={
            "required": "choose at least one annotator to add",
            "invalid_choice": "%(value)s is no annotator account",
            "invalid_pk_value": "%(pk)s is no annotator account",
        },
    )
    max_units = forms.IntegerField(
        required=False, error_messages={"invalid": "the cap must be a whole number of units, or empty for none"}
    )

    def clean_max_units(self):
        return service_check(max_units_check, max_units=self.cleaned_data["max_units"])


class AddToDatasetForm(forms.Form):
    """The annotator admin's "Add to dataset…": which dataset, and an optional cap on units."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"))
    max_units = forms.IntegerField(required=False, label="Cap (units)", help_text="Empty: no cap")

    def clean_max_units(self):
        return service_check(max_units_check, max_units=self.cleaned_data["max_units"])


# Reasons are the dataset's labels (unit_submit checks them); a longer one is no label of ours.
MAX_REASON_CHARS = 200
MAX_REASONS = 50
# A unit's response keys are 8 hex digits (secrets.token_hex(4)); 32 leaves room, no more.
RESPONSE_KEY = re.compile(r"[0-9a-f]{1,32}")


class ReasonsField(forms.Field):
    """The ticked reasons of one response (every value of ``labels-<key>``)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[str]:
        values = list(value or [])
        if len(values) > MAX_REASONS or any(len(v) > MAX_REASON_CHARS for v in values):
            raise forms.ValidationError(
                f"a response takes at most {MAX_REASONS} reasons of at most {MAX_REASON_CHARS} characters"
            )
        return values


class UnitAnswersForm(forms.Form):
    """What a unit's page posts (ours and the crowd's): ``score-<key>`` and ``labels-<key>`` for each
    response and the time the unit took. The form checks the request's types and sizes; what a unit
    accepts (its responses, the scale, the dataset's reasons, the duration's range) is unit_submit's
    rule, asked here so that a bad duration is named before anything is looked up."""

    duration_ms = forms.IntegerField(
        required=False,
        error_messages={
            "invalid": f"duration_ms must be a whole number of milliseconds from 0 to {MAX_DURATION_MS} (24 hours)"
        },
    )

    def __init__(self, data, *, keys: list[str] | None = None):
        """``keys``: the unit's responses; without them, every response the form names (the
        service then refuses those that are not the unit's)."""
        super().__init__(data)
        if keys is None:
            keys = [name.removeprefix("score-") for name in data if name.startswith("score-")]
        self.keys = keys
        for key in keys:
            self.fields[f"score-{key}"] = forms.IntegerField(
                required=False, error_messages={"invalid": "a score must be a whole number"}
            )
            self.fields[f"labels-{key}"] = ReasonsField(required=False)

    def clean_duration_ms(self):
        return service_check(duration_check, duration_ms=self.cleaned_data["duration_ms"])

    def clean(self):
        if any(not RESPONSE_KEY.fullmatch(key) for key in self.keys):
            raise forms.ValidationError("the form names responses that are not in this unit")
        return super().clean()

    def answers(self) -> dict[str, Answer]:
        """The scored responses (one left unscored is the service's "no score yet")."""
        data = self.cleaned_data
        return {
            key: Answer(data[f"score-{key}"], data[f"labels-{key}"])
            for key in self.keys
            if data[f"score-{key}"] is not None
        }
