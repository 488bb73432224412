"""The registered providers, by the name a configuration stores in its `provider` field.

Adding a provider: write one module beside this one that defines a `ChatProvider` subclass and
a `PROVIDER` instance, and add that module to `_MODULES` below.
"""

from django.core.exceptions import ImproperlyConfigured

from ..models import ModelConfiguration
from . import anthropic, google, offline, openai_compat
from .base import ChatProvider

_MODULES = (openai_compat, anthropic, google, offline)
PROVIDERS: dict[str, ChatProvider] = {module.PROVIDER.name: module.PROVIDER for module in _MODULES}


def choices() -> list[tuple[str, str]]:
    return [(provider.name, provider.label) for provider in PROVIDERS.values()]


def provider_named(name: str) -> ChatProvider:
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ImproperlyConfigured(
            f"No model provider {name!r}; registered: {', '.join(PROVIDERS)}."
        ) from None


def provider_for(configuration: ModelConfiguration) -> ChatProvider:
    return provider_named(configuration.provider)
