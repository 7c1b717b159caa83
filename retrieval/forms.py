from django import forms
from django.core.validators import validate_slug

from annotation.models import Dataset
from retrieval.services.repository_import import FORMATS


class RepositoryImportForm(forms.Form):
    file = forms.FileField(help_text="One utterance per line (.gz too), Cornell movie_lines.txt, or DailyDialog")
    name = forms.CharField(validators=[validate_slug], help_text="New repository, or an existing one to add to")
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS])
    min_tokens = forms.IntegerField(min_value=0, initial=1, help_text="Skip utterances with fewer words")
    exclude_datasets = forms.ModelMultipleChoiceField(
        queryset=Dataset.objects.order_by("name"),
        required=False,
        to_field_name="name",
        help_text="Leave out every utterance that occurs in these datasets",
    )
