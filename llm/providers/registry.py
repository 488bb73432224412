"""The registered providers, by the name a configuration stores in its `provider` field.

Adding a provider: write one module beside this one that defines a `ChatProvider` subclass and
a `PROVIDER` instance, and add its name, label and module to `_MODULES` below
(`tests/llm/test_provider_registry.py` checks the two agree).

A provider's module is imported when a configuration first needs it: the SDKs they import cost
every process about two seconds of CPU to load (`make demo` starts four), and most processes
only ever call the offline demo model or one provider.
"""

from importlib import import_module

from django.core.exceptions import ImproperlyConfigured

from ..models import ModelConfiguration
from .base import ChatProvider

# name → (label, module beside this one), in the order forms list them.
_MODULES: dict[str, tuple[str, str]] = {
    "openai_compatible": ("OpenAI-compatible endpoint", "openai_compat"),
    "anthropic": ("Anthropic (Messages API)", "anthropic"),
    "google": ("Google (Gemini API)", "google"),
    "offline": ("Offline demo model", "offline"),
}


def choices() -> list[tuple[str, str]]:
    return [(name, label) for name, (label, _module) in _MODULES.items()]


def provider_named(name: str) -> ChatProvider:
    try:
        _label, module = _MODULES[name]
    except KeyError:
        raise ImproperlyConfigured(
            f"No model provider {name!r}; registered: {', '.join(_MODULES)}."
        ) from None
    return import_module(f"{__package__}.{module}").PROVIDER


def provider_for(configuration: ModelConfiguration) -> ChatProvider:
    return provider_named(configuration.provider)


def all_providers() -> dict[str, ChatProvider]:
    """Every provider, imported (for checks that look at them all)."""
    return {name: provider_named(name) for name in _MODULES}


def __getattr__(name: str) -> dict[str, ChatProvider]:
    # `PROVIDERS` stays available to callers, imported only when one reads it.
    if name == "PROVIDERS":
        return all_providers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
