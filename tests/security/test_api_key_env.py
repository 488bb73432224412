"""A model configuration cannot send the platform's secrets to a host a maintainer picks."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from llm.exceptions import LLMError
from llm.gateway import chat
from llm.models import ModelConfiguration
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

FORM = {
    "name": "Exfiltrator",
    "provider": "openai_compatible",
    "base_url": "https://evil.example/v1",
    "model_id": "m",
    "temperature": "0.2",
    "max_tokens": "512",
    "extra_params": "",
    "price_per_million_input_tokens": "0",
    "price_per_million_output_tokens": "0",
    "is_active": "on",
}


@pytest.mark.parametrize(
    "name",
    [
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "EMAIL_URL",
        "CELERY_BROKER_URL",
        "CACHE_URL",
        "LLM_LIMITS_REDIS_URL",
        "DJANGO_API_KEY",  # matches the pattern, but is a platform settings name
        "HOME",
        "PATH",
        "AWS_SECRET_ACCESS_KEY",
    ],
)
def test_the_form_refuses_platform_and_unmatched_variables(client_for, maintainer, name):
    response = client_for(maintainer).post(
        reverse("llm:configuration-create"), {**FORM, "api_key_env": name}
    )
    assert response.status_code == 200
    assert "api_key_env" in response.context["form"].errors
    assert not ModelConfiguration.objects.filter(name="Exfiltrator").exists()


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "HF_TOKEN", ""])
def test_key_variables_matching_the_pattern_are_accepted(name):
    ModelConfigurationFactory.build(api_key_env=name).full_clean()


def test_the_patterns_are_configurable(settings):
    settings.LLM_API_KEY_ENV_PATTERNS = ["MODEL_KEY_*"]
    ModelConfigurationFactory.build(api_key_env="MODEL_KEY_LOCAL").full_clean()
    with pytest.raises(ValidationError):
        ModelConfigurationFactory.build(api_key_env="OPENAI_API_KEY").full_clean()


def test_a_row_saved_before_the_rule_cannot_send_the_secret(monkeypatch, fake_openai):
    monkeypatch.setenv("DJANGO_SECRET_KEY", "the-real-secret")
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url, api_key_env="DJANGO_SECRET_KEY"
    )
    fake_openai.enqueue(content="hello")
    with pytest.raises(LLMError, match="platform's own settings"):
        chat(
            configuration=configuration,
            messages=[{"role": "user", "content": "hi"}],
            role="target",
            purpose="tests.exfiltration",
        )
    assert fake_openai.requests == []


def test_the_list_shows_whether_the_key_is_set_never_its_value(client_for, maintainer, monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "sk-acme-very-secret")
    ModelConfigurationFactory(name="Acme", api_key_env="ACME_API_KEY")
    ModelConfigurationFactory(name="Other", api_key_env="OTHER_API_KEY")
    monkeypatch.delenv("OTHER_API_KEY", raising=False)
    page = client_for(maintainer).get(reverse("llm:configuration-list")).content.decode()
    assert "sk-acme-very-secret" not in page
    assert 'Key <code>ACME_API_KEY</code>: <span class="text-success">set</span>' in page
    assert 'Key <code>OTHER_API_KEY</code>: <span class="text-danger">not set</span>' in page
