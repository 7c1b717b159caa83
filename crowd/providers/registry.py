"""Which class serves each provider: a batch's provider (a CrowdProvider value) to its Provider.
Apart from the interface (base.py), which knows none of them, this is the one module that knows
every provider; callers get theirs here and ask it what differs."""

from core.errors import UserError
from crowd.models import CrowdBatch

from .base import Provider
from .internal import InternalProvider
from .link import LinkProvider
from .mturk import MTurkProvider
from .prolific import ProlificProvider

PROVIDERS: dict[str, type[Provider]] = {
    cls.name: cls for cls in (InternalProvider, MTurkProvider, ProlificProvider, LinkProvider)
}


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
