from django import forms
from django.core.validators import validate_slug

from annotation.models import FilterRules
from annotation.services.dialogue_import import FORMATS as DIALOGUE_FORMATS


class DialogueImportForm(forms.Form):
    file = forms.FileField(help_text='DailyDialog dialogues_*.txt, or JSONL with {"context": [...], "response": "..."}')
    format = forms.ChoiceField(choices=[(f, f) for f in DIALOGUE_FORMATS])
    dataset = forms.CharField(validators=[validate_slug], help_text="New or existing dataset name")
    context_turns = forms.IntegerField(min_value=1, max_value=20, initial=3)


class TestsetImportForm(forms.Form):
    tsv = forms.FileField(
        label="Test set TSV", help_text="context turns, ground truth, false candidates; tab-separated"
    )
    scores = forms.FileField(required=False, label="human_scores.jsonl", help_text="optional, aligned with the TSV")
    dataset = forms.CharField(validators=[validate_slug])
    context_turns = forms.IntegerField(min_value=1, max_value=20, initial=3)


class ScoreImportForm(forms.Form):
    file = forms.FileField(help_text="CSV with the header question_id,candidate_id,annotator,score")


class BuildTestsetForm(forms.Form):
    name = forms.CharField(validators=[validate_slug], help_text="Name of the new, frozen release")
    false_per_question = forms.IntegerField(min_value=1, max_value=20, initial=3, label="False candidates per question")
    seed = forms.IntegerField(initial=0)
    rules = forms.ModelChoiceField(queryset=FilterRules.objects.order_by("-version"), empty_label=None)


class PreviewForm(forms.Form):
    rules = forms.ModelChoiceField(queryset=FilterRules.objects.order_by("-version"), required=False)
    false_per_question = forms.IntegerField(min_value=1, max_value=20, initial=3, required=False)
