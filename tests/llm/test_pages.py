import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from evaluations.models import RunStatus
from llm.models import CallOutcome, ModelConfiguration, ModelRole
from tests.evaluations.factories import EvaluationRunFactory
from tests.llm.factories import (
    LLMCallFactory,
    ModelConfigurationFactory,
    ModelRoleAssignmentFactory,
)

pytestmark = pytest.mark.django_db

PAGES = ["llm:configuration-list", "llm:configuration-create", "llm:call-list"]


@pytest.mark.parametrize("name", PAGES)
def test_anonymous_visitors_are_sent_to_sign_in(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert reverse("account_login") in response["Location"]


@pytest.mark.parametrize("name", PAGES)
def test_contributors_are_refused(client_for, contributor, name):
    assert client_for(contributor).get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", PAGES)
def test_maintainers_open_every_page(client_for, maintainer, name):
    assert client_for(maintainer).get(reverse(name)).status_code == 200


def test_researchers_read_the_call_log_but_not_configurations(client_for, researcher):
    client = client_for(researcher)
    assert client.get(reverse("llm:call-list")).status_code == 200
    assert client.get(reverse("llm:configuration-list")).status_code == 403


@pytest.mark.slow(reason="records a run of calls to show their usage")
def test_configuration_list_shows_roles_offline_badge_and_recent_usage(client_for, maintainer):
    call_command("seed_demo", verbosity=0)
    hosted = ModelConfigurationFactory(name="Hosted judge", base_url="https://models.example/v1")
    ModelRoleAssignmentFactory(role=ModelRole.TARGET, configuration=hosted, is_default=False)
    LLMCallFactory(configuration=hosted, prompt_tokens=1200, completion_tokens=300)
    LLMCallFactory(
        configuration=hosted, outcome=CallOutcome.RATE_LIMITED, prompt_tokens=0, completion_tokens=0
    )
    page = client_for(maintainer).get(reverse("llm:configuration-list")).content.decode()
    assert "Offline target: agreeable" in page
    assert "offline demo model" in page
    assert "https://models.example/v1" in page
    assert "Target model" in page
    assert "1,500" in page


def test_configuration_form_keeps_input_on_error(client_for, maintainer):
    response = client_for(maintainer).post(
        reverse("llm:configuration-create"),
        {
            "name": "Local vLLM",
            "provider": "openai_compatible",
            "base_url": "http://127.0.0.1:8001/v1",
            "model_id": "llama-3-8b",
            "api_key_env": "sk-not-a-variable-name",
            "temperature": "0.2",
            "max_tokens": "512",
            "extra_params": '{"top_k": 40}',
            "system_prompt": "Be kind and careful.",
            "price_per_million_input_tokens": "0",
            "price_per_million_output_tokens": "0",
            "roles": ["target"],
            "is_active": "on",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "not the key itself" in page
    assert 'value="Local vLLM"' in page
    assert "http://127.0.0.1:8001/v1" in page
    assert "Be kind and careful." in page
    assert re.search(r'name="roles" value="target"\s+id="id_roles_\d+" checked', page)
    assert not ModelConfiguration.objects.exists()


def test_configuration_form_creates_and_edits(client_for, maintainer):
    client = client_for(maintainer)
    data = {
        "name": "Local vLLM",
        "provider": "openai_compatible",
        "base_url": "http://127.0.0.1:8001/v1",
        "model_id": "llama-3-8b",
        "api_key_env": "",
        "temperature": "0.2",
        "max_tokens": "512",
        "extra_params": "",
        "price_per_million_input_tokens": "0",
        "price_per_million_output_tokens": "0",
        "roles": ["target"],
        "default_roles": ["judge"],
        "is_active": "on",
    }
    response = client.post(reverse("llm:configuration-create"), data)
    assert response.status_code == 302
    configuration = ModelConfiguration.objects.get(name="Local vLLM")
    assert set(configuration.role_assignments.values_list("role", "is_default")) == {
        ("target", False),
        ("judge", True),
    }
    edit_url = reverse("llm:configuration-update", args=[configuration.pk])
    assert "llama-3-8b" in client.get(edit_url).content.decode()
    response = client.post(edit_url, {**data, "model_id": "llama-3-70b", "default_roles": []})
    assert response.status_code == 302
    configuration.refresh_from_db()
    assert configuration.model_id == "llama-3-70b"
    assert configuration.role_assignments.count() == 1


def test_configuration_form_sets_the_token_limits(client_for, maintainer):
    client = client_for(maintainer)
    page = client.get(reverse("llm:configuration-create")).content.decode()
    assert 'name="input_tokens_per_minute"' in page
    assert "prompt cache do not count" in page
    response = client.post(
        reverse("llm:configuration-create"),
        {
            "name": "Limited",
            "provider": "openai_compatible",
            "base_url": "http://127.0.0.1:8001/v1",
            "model_id": "llama-3-8b",
            "price_per_million_input_tokens": "0",
            "price_per_million_output_tokens": "0",
            "input_tokens_per_minute": "30000",
            "output_tokens_per_minute": "8000",
            "is_active": "on",
        },
    )
    assert response.status_code == 302
    configuration = ModelConfiguration.objects.get(name="Limited")
    assert configuration.input_tokens_per_minute == 30000
    assert configuration.output_tokens_per_minute == 8000
    assert configuration.paced_until is None  # set by replies' headers, never by the form


def test_call_log_filters_and_shows_errors(client_for, maintainer):
    failing = ModelConfigurationFactory(name="Flaky endpoint")
    LLMCallFactory(
        configuration=failing,
        outcome=CallOutcome.HTTP_ERROR,
        http_status=503,
        error_message="answered HTTP 503: overloaded",
        response_text="",
    )
    LLMCallFactory(purpose="tests.other", response_text="A fine reply")
    client = client_for(maintainer)
    page = client.get(reverse("llm:call-list"), {"outcome": "http_error"}).content.decode()
    assert "answered HTTP 503: overloaded" in page
    assert "A fine reply" not in page
    page = client.get(reverse("llm:call-list"), {"configuration": failing.pk}).content.decode()
    assert "Flaky endpoint" in page
    assert "tests.other" not in page


def test_call_log_is_paginated(client_for, maintainer):
    configuration = ModelConfigurationFactory()
    LLMCallFactory.create_batch(55, configuration=configuration)
    response = client_for(maintainer).get(reverse("llm:call-list"), {"page": 2})
    assert response.status_code == 200
    assert len(response.context["calls"]) == 5


def test_navigation_links_to_the_model_pages(client_for, maintainer, researcher):
    page = client_for(maintainer).get(reverse("core:dashboard")).content.decode()
    assert reverse("llm:configuration-list") in page
    assert reverse("llm:call-list") in page
    page = client_for(researcher).get(reverse("core:dashboard")).content.decode()
    assert reverse("llm:call-list") in page
    assert f'href="{reverse("llm:configuration-list")}"' not in page


@pytest.mark.parametrize("model", ["modelconfiguration", "llmcall", "llmresponsecache"])
def test_admin_pages_open_for_maintainers(client_for, maintainer, model):
    LLMCallFactory()
    response = client_for(maintainer).get(reverse(f"admin:llm_{model}_changelist"))
    assert response.status_code == 200


def test_a_run_pages_call_log_link_shows_only_that_runs_calls(client_for, maintainer):
    run = EvaluationRunFactory(status=RunStatus.COMPLETED, finished_at=timezone.now())
    LLMCallFactory(run_id=run.pk, purpose="tests.this-run")
    LLMCallFactory(run_id=run.pk + 1000, purpose="tests.other-run")
    LLMCallFactory(purpose="tests.no-run")
    client = client_for(maintainer)
    run_page = client.get(reverse("evaluations:run-detail", args=[run.pk])).content.decode()
    link = f"{reverse('llm:call-list')}?run={run.pk}"
    assert f'href="{link}"' in run_page
    page = client.get(link).content.decode()
    assert "tests.this-run" in page
    assert "tests.other-run" not in page
    assert "tests.no-run" not in page
    assert 'data-testid="call-log-run"' in page
    # The run filter survives the other filters (a hidden field of the filter form).
    assert f'name="run" value="{run.pk}"' in page
    filtered = client.get(reverse("llm:call-list"), {"run": run.pk, "outcome": "success"})
    assert [c.purpose for c in filtered.context["calls"]] == ["tests.this-run"]
    everything = client.get(reverse("llm:call-list")).content.decode()
    assert "tests.other-run" in everything
    assert "tests.no-run" in everything


def test_the_admin_shows_the_prompt_of_a_call_stored_once_or_inline(
    client_for, maintainer, fake_openai
):
    from llm.gateway import chat
    from llm.models import LLMCall

    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    question = [{"role": "user", "content": "What is a stored-once prompt?"}]
    chat(configuration=configuration, messages=question, role=ModelRole.TARGET, purpose="t")
    stored_once = LLMCall.objects.get(configuration=configuration)
    assert stored_once.prompt_id
    assert stored_once.messages == []
    inline = LLMCallFactory(messages=[{"role": "user", "content": "An older row, inline."}])
    client = client_for(maintainer)
    for call, text in ((stored_once, "What is a stored-once prompt?"), (inline, "older row")):
        page = client.get(reverse("admin:llm_llmcall_change", args=[call.pk])).content.decode()
        assert text in page
