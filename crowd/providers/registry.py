"""Which class serves each provider: a batch's provider (a CrowdProvider value) to its Provider.
Callers get theirs here and ask it what differs. The classes are registered from
CrowdConfig.ready(), the one place that names every provider: this module knows the interface
(base.py) only, so that a selector asking a batch's provider a question (its balance, its units per
worker) does not import the platforms' modules, which write (a sync saves the answers it fetched)."""

from core.errors import UserError
from crowd.models import CrowdBatch

from .base import Provider

PROVIDERS: dict[str, type[Provider]] = {}


def providers_register(*classes: type[Provider]) -> None:
    for cls in classes:
        PROVIDERS[cls.name] = cls


def provider_class(name: str) -> type[Provider]:
    """The class of a provider, by its name (CrowdProvider's value)."""
    cls = PROVIDERS.get(name)
    if cls is None:
        raise UserError(f"provider {name!r} is not available yet")
    return cls


def provider_for(*, batch: CrowdBatch, provider: Provider | None = None) -> Provider:
    """The provider that works on the batch's platform, or ``provider`` (one made by the caller,
    with its own client: the tests') once it is checked to be the batch's."""
    if provider is None:
        return provider_class(batch.provider).for_batch(batch=batch)
    if provider.name != batch.provider:
        raise UserError(f"batch {batch.name} is on {batch.provider}, not {provider.name}")
    return provider
