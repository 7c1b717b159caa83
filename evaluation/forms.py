"""The campaign form of the workspace: a campaign created and started on one page."""

from django import forms

from annotation.models import Repository
from evaluation.models import System
from evaluation.scoring.backends import scoring_kinds
from pairs.models import PairSet
from testsets.models import TestSet

MAX_RANDOM_TRIALS = 10_000


class CampaignNewForm(forms.Form):
    """What a campaign compares and how: the systems it scores on a test set (CHOSEN), on random
    candidates from a repository (RANDOM) and on a pair set. ``dataset``: offer that dataset's test
    sets and pair sets (its newest test set first)."""

    name = forms.SlugField(max_length=100, help_text="letters, digits, - and _")
    testset = forms.ModelChoiceField(queryset=TestSet.objects.none(), required=False, label="test set")
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="the systems to rank (systems of imported responses come with their ratings)",
    )
    pair_set = forms.ModelChoiceField(queryset=PairSet.objects.none(), required=False, label="pair set")
    repository = forms.ModelChoiceField(
        queryset=Repository.objects.order_by("name"),
        required=False,
        label="repository for RANDOM trials",
        help_text="false candidates drawn at random from it, as in Sato et al. §4 (empty: no RANDOM trials)",
    )
    random_trials = forms.IntegerField(min_value=1, max_value=MAX_RANDOM_TRIALS, initial=100, label="RANDOM trials")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, dataset=None, **kwargs):
        super().__init__(*args, **kwargs)
        testsets = TestSet.objects.order_by("-created_at", "-id")
        pair_sets = PairSet.objects.order_by("-created_at", "-id")
        if dataset is not None:
            testsets, pair_sets = testsets.filter(dataset=dataset), pair_sets.filter(dataset=dataset)
        self.fields["testset"].queryset = testsets
        self.fields["pair_set"].queryset = pair_sets
        self.fields["systems"].queryset = System.objects.filter(kind__in=scoring_kinds()).order_by("name")
        if not self.is_bound:
            newest = testsets.first()
            self.initial.setdefault("testset", newest.pk if newest else None)
            if newest is not None and dataset is not None:
                self.initial.setdefault("name", f"{dataset.name}-campaign")

    def clean(self):
        data = super().clean()
        if not self.errors and not data.get("testset") and not data.get("pair_set"):
            raise forms.ValidationError("choose a test set or a pair set (or both) for the systems to be ranked on")
        if not self.errors and not data.get("systems"):
            raise forms.ValidationError("choose at least one system")
        return data
