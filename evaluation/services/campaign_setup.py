"""Setting a campaign up from names (the command line's way; the admin edits the model directly)."""

from django.db import transaction

from annotation.models import Repository
from core.errors import UserError
from core.names import slug_check
from evaluation.models import Campaign, Generation, System
from evaluation.services.campaigns import campaign_start
from pairs.models import PairSet
from testsets.models import TestSet

# /campaigns/<name>/ is a campaign's report: names that a page there takes are not campaign names
RESERVED_NAMES = frozenset({"new"})


def campaign_create(
    *,
    name: str,
    testset_name: str | None = None,
    system_names: list[str] = (),
    generation_ids: list[int] = (),
    repository_name: str | None = None,
    pair_set_name: str | None = None,
    random_trials: int = 100,
    seed: int = 0,
    bootstrap_resamples: int = 1000,
    description: str = "",
) -> Campaign:
    """A new campaign; every name must exist (nothing is created when one does not)."""
    slug_check(name=name, what="campaign")
    if name in RESERVED_NAMES:
        raise UserError(f"{name!r} names a page under /campaigns/; choose another campaign name")
    if Campaign.objects.filter(name=name).exists():
        raise UserError(f"campaign {name!r} exists already")
    testset = None
    if testset_name:
        testset = TestSet.objects.filter(name=testset_name).first()
        if testset is None:
            raise UserError(f"no test set {testset_name!r}")
    repository = None
    if repository_name:
        repository = Repository.objects.filter(name=repository_name).first()
        if repository is None:
            raise UserError(f"no repository {repository_name!r}")
    pair_set = None
    if pair_set_name:
        pair_set = PairSet.objects.filter(name=pair_set_name).first()
        if pair_set is None:
            raise UserError(f"no pair set {pair_set_name!r}")
    systems = list(System.objects.filter(name__in=system_names))
    missing = sorted(set(system_names) - {s.name for s in systems})
    if missing:
        raise UserError(f"no system(s) {', '.join(missing)}")
    generations = list(Generation.objects.filter(pk__in=generation_ids))
    unknown = sorted(set(generation_ids) - {g.pk for g in generations})
    if unknown:
        raise UserError(f"no generation(s) {', '.join(map(str, unknown))}")
    if len({g.system_id for g in generations}) != len(generations):
        raise UserError("one generation per system: two of the given generations belong to the same system")
    if systems and testset is None and pair_set is None:
        raise UserError(
            "systems are ranked by their accuracy on a test set or contrastive pairs: give the test set "
            "(--testset) or a pair set (--pair-set)"
        )
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name,
            description=description,
            testset=testset,
            repository=repository,
            pair_set=pair_set,
            random_trials=random_trials,
            seed=seed,
            bootstrap_resamples=bootstrap_resamples,
        )
        campaign.systems.set(systems)
        campaign.generations.set(generations)
    return campaign


def campaign_launch(
    *,
    name: str,
    system_names: list[str],
    testset_name: str | None = None,
    pair_set_name: str | None = None,
    repository_name: str | None = None,
    random_trials: int = 100,
    description: str = "",
    created_by=None,
):
    """A new campaign, and its job started (the workspace's way): both or neither. Returns
    (campaign, job)."""
    with transaction.atomic():
        campaign = campaign_create(
            name=name,
            testset_name=testset_name,
            system_names=system_names,
            pair_set_name=pair_set_name,
            repository_name=repository_name,
            random_trials=random_trials,
            description=description,
        )
        job = campaign_start(campaign=campaign, created_by=created_by)
    return campaign, job
