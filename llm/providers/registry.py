"""The registered providers, by the name a configuration stores in its `provider` field: the one
place that maps a name to its package.

Adding a provider: write one package beside this one whose `__init__` declares its
`ProviderFacts` as `FACTS` and whose `client` module defines a `ChatProvider` subclass as
`PROVIDER_CLASS`, and add its name and package to `_PACKAGES` below
(`tests/llm/test_provider_registry.py` checks the two agree).

A provider's facts are read without its client: the SDKs the clients import cost every process
about two seconds of CPU to load (`make demo` starts four), and most processes only ever call
the offline demo model or one provider, while pages, forms and the egress policy read every
provider's facts. A client module is imported when a configuration first calls its provider.
"""

import functools
from importlib import import_module
from types import ModuleType

from .base import ChatProvider, HttpClients, ProviderConfig, ProviderFacts

# name → package beside this one, in the order forms list them.
_PACKAGES: dict[str, str] = {
    "openai_compatible": "openai_compat",
    "anthropic": "anthropic",
    "google": "google",
    "offline": "offline",
    "imported": "imported",
}


class UnknownProvider(LookupError):
    """A provider name no package is registered for."""

    def __init__(self, name: str) -> None:
        super().__init__(f"No model provider {name!r}; registered: {', '.join(_PACKAGES)}.")


def _package(name: str) -> str:
    try:
        return f"{__package__}.{_PACKAGES[name]}"
    except KeyError:
        raise UnknownProvider(name) from None


def facts(name: str) -> ProviderFacts:
    """What the provider `name` knows about itself (its client is not loaded)."""
    return import_module(_package(name)).FACTS


def all_facts() -> dict[str, ProviderFacts]:
    return {name: facts(name) for name in _PACKAGES}


def choices() -> list[tuple[str, str]]:
    return [(name, found.label) for name, found in all_facts().items()]


def provider_class(name: str) -> type[ChatProvider]:
    """The provider's client class, loading its SDK on first use."""
    return import_module(f"{_package(name)}.client").PROVIDER_CLASS


def batches_module(name: str) -> ModuleType:
    """The provider's batch API (`batches` beside its client), for providers with
    `has_batches`; loads its SDK on first use."""
    return import_module(f"{_package(name)}.batches")


def build(
    name: str,
    *,
    model_name: str,
    base_url: str,
    api_key: str,
    config: ProviderConfig,
    http: HttpClients,
) -> ChatProvider:
    """A provider of `name` for one model at one address with one key."""
    return provider_class(name)(model_name, base_url, api_key, config, http=http)


@functools.cache
def key_hosts() -> dict[str, tuple[str, ...]]:
    """Every provider's API-key variables and the hosts each may be sent to."""
    bound: dict[str, tuple[str, ...]] = {}
    for found in all_facts().values():
        for variable, hosts in found.key_hosts.items():
            bound[variable] = tuple(dict.fromkeys((*bound.get(variable, ()), *hosts)))
    return bound
