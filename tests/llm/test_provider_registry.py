"""The registry names each provider without importing it, and its table agrees with the
provider modules; a process that never calls a provider never loads that provider's SDK."""

import subprocess
import sys
from pathlib import Path

import pytest

from llm.models import Provider
from llm.providers import base, registry

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_table_names_each_module_provider_as_it_names_itself():
    providers = registry.all_providers()
    assert list(providers) == [name for name, _label in registry.choices()]
    for name, label in registry.choices():
        provider = providers[name]
        assert isinstance(provider, base.ChatProvider)
        assert (provider.name, provider.label) == (name, label)
    assert providers == registry.PROVIDERS
    # Every provider a configuration can store is registered.
    assert set(Provider.values) <= set(providers)


@pytest.mark.slow(reason="starts Django in fresh interpreters")
def test_starting_django_loads_no_provider_sdk():
    """The SDKs load when a provider is first used, not when a process starts."""
    code = (
        "import sys, django; django.setup();"
        "import django.urls; django.urls.get_resolver().url_patterns;"
        "from llm.providers import registry; registry.provider_named('offline');"
        "print(sorted(m for m in ('anthropic', 'openai', 'google.genai') if m in sys.modules))"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test", "PATH": "/usr/bin"},
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
    loaded = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code.replace("'offline'", "'anthropic'")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test", "PATH": "/usr/bin"},
    )
    assert loaded.stdout.strip().splitlines()[-1] == "['anthropic']", loaded.stderr
