"""The provider registry and interface: every provider a batch may name has a class, and every
operation a provider offers is declared by the interface that callers program against."""

import inspect

import pytest

from core.errors import UserError
from crowd.models import CrowdProvider
from crowd.providers.base import Provider
from crowd.providers.link import LinkProvider
from crowd.providers.registry import PROVIDERS, provider_class, provider_for


def test_every_provider_a_batch_may_name_has_a_class():
    assert set(PROVIDERS) == set(CrowdProvider.values)
    assert all(issubclass(cls, Provider) for cls in PROVIDERS.values())


@pytest.mark.parametrize("cls", PROVIDERS.values(), ids=lambda cls: cls.__name__)
def test_the_interface_declares_every_operation_of_a_provider(cls):
    offered = {name for name, member in vars(cls).items() if inspect.isfunction(member) and not name.startswith("_")}
    assert offered <= set(vars(Provider))


def test_an_unknown_provider_is_a_clear_error():
    with pytest.raises(UserError, match="provider 'carrier-pigeon' is not available yet"):
        provider_class("carrier-pigeon")


def test_a_provider_handed_to_a_service_must_be_the_batchs(mturk_batch):
    with pytest.raises(UserError, match="is on mturk, not link"):
        provider_for(batch=mturk_batch, provider=LinkProvider())
