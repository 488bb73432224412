"""The gateway against a real local HTTP server, through the real openai client."""

from decimal import Decimal

import pytest

from llm import transport
from llm.exceptions import LLMError
from llm.gateway import chat
from llm.models import CallOutcome, LLMCall
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

HELLO = [{"role": "user", "content": "How should I handle stress before exams?"}]


@pytest.fixture
def configuration(fake_openai):
    return ModelConfigurationFactory(base_url=fake_openai.base_url, model_id="test-model")


def ask(configuration, **kwargs):
    kwargs.setdefault("messages", HELLO)
    kwargs.setdefault("use_cache", False)
    return chat(configuration=configuration, role="target", purpose="tests.chat", **kwargs)


def outcomes(result):
    calls = LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt")
    return [call.outcome for call in calls]


def test_success_records_tokens_latency_and_cost(fake_openai, configuration):
    fake_openai.enqueue(content="Try short breaks.", prompt_tokens=1000, completion_tokens=500)
    result = ask(configuration)
    assert result.text == "Try short breaks."
    assert (result.prompt_tokens, result.completion_tokens) == (1000, 500)
    # 1000 × $2/M + 500 × $8/M
    assert result.cost == Decimal("0.006")
    assert not result.cached
    assert not result.is_offline
    call = LLMCall.objects.get(pk=result.call_ids[0])
    assert call.outcome == CallOutcome.SUCCESS
    assert call.http_status == 200
    assert call.response_text == "Try short breaks."
    assert call.cost_estimate == Decimal("0.006")
    assert call.latency_ms >= 0
    assert call.purpose == "tests.chat"
    assert call.role == "target"
    assert call.prompt_messages[-1] == HELLO[-1]
    request = fake_openai.last_request
    assert request.model == "test-model"
    assert request.param("temperature") == 0.0
    assert request.param("max_tokens") == 256


def test_configuration_system_prompt_and_parameters_reach_the_endpoint(fake_openai):
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url,
        system_prompt="You are a kind assistant.",
        extra_params={"top_k": 40, "offline_profile": "careful"},
        seed=7,
    )
    messages = [{"role": "system", "content": "Answer briefly."}, *HELLO]
    ask(configuration, messages=messages, presence_penalty=0.5)
    request = fake_openai.last_request
    assert [m["role"] for m in request.messages] == ["system", "user"]
    assert request.messages[0]["content"] == "You are a kind assistant.\n\nAnswer briefly."
    assert request.param("top_k") == 40
    assert request.param("presence_penalty") == 0.5
    assert request.param("seed") == 7
    assert "offline_profile" not in request.body


def test_retries_survive_transient_failures_then_succeed(fake_openai, configuration, settings):
    settings.LLM_TIMEOUT_SECONDS = 0.3
    fake_openai.enqueue(status=429, headers={"Retry-After": "0"})
    fake_openai.enqueue(status=500)
    fake_openai.enqueue(delay=1.0)
    fake_openai.enqueue(close_connection=True)
    fake_openai.enqueue(content="Finally.")
    result = ask(configuration)
    assert result.text == "Finally."
    assert outcomes(result) == [
        CallOutcome.RATE_LIMITED,
        CallOutcome.HTTP_ERROR,
        CallOutcome.TIMEOUT,
        CallOutcome.CONNECTION_ERROR,
        CallOutcome.SUCCESS,
    ]
    calls = list(LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt"))
    assert [c.attempt for c in calls] == [1, 2, 3, 4, 5]
    assert len({c.group_id for c in calls}) == 1
    assert [c.http_status for c in calls] == [429, 500, None, None, 200]
    assert all(c.error_message for c in calls[:4])
    assert fake_openai.request_count == 5


def test_retry_after_is_honoured_up_to_the_cap(fake_openai, configuration, settings, monkeypatch):
    waits = []
    monkeypatch.setattr(transport, "sleep", waits.append)
    settings.LLM_BACKOFF_MAX_SECONDS = 10
    fake_openai.enqueue(status=429, headers={"Retry-After": "3"})
    fake_openai.enqueue(status=429, headers={"Retry-After": "120"})
    fake_openai.enqueue(status=503)
    ask(configuration)
    assert waits[:2] == [3.0, 10]
    # Without Retry-After: full jitter below base × 2^retry.
    assert 0 <= waits[2] <= settings.LLM_BACKOFF_BASE_SECONDS * 4


def test_gives_up_after_max_retries(fake_openai, configuration, settings):
    settings.LLM_MAX_RETRIES = 2
    for _ in range(3):
        fake_openai.enqueue(status=503)
    with pytest.raises(LLMError) as caught:
        ask(configuration)
    assert "after 3 attempts" in caught.value.message
    assert "HTTP 503" in caught.value.message
    assert caught.value.retryable
    calls = LLMCall.objects.filter(pk__in=caught.value.call_ids)
    assert [c.outcome for c in calls.order_by("attempt")] == [CallOutcome.HTTP_ERROR] * 3
    assert fake_openai.request_count == 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_fail_fast_naming_endpoint_and_model(fake_openai, configuration, status):
    fake_openai.enqueue(status=status)
    with pytest.raises(LLMError) as caught:
        ask(configuration)
    message = caught.value.message
    assert f"HTTP {status}" in message
    assert fake_openai.base_url in message
    assert "test-model" in message
    assert caught.value.status_code == status
    assert fake_openai.request_count == 1
    call = LLMCall.objects.get(pk=caught.value.call_ids[0])
    assert call.outcome == CallOutcome.HTTP_ERROR
    assert call.http_status == status
    assert "scripted" in call.response_text


def test_api_key_is_read_from_the_named_variable_at_call_time(fake_openai, monkeypatch):
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url, api_key_env="GATEWAY_TEST_API_KEY"
    )
    monkeypatch.setenv("GATEWAY_TEST_API_KEY", "sk-first")
    ask(configuration)
    assert fake_openai.last_request.authorization == "Bearer sk-first"
    monkeypatch.setenv("GATEWAY_TEST_API_KEY", "sk-rotated")
    ask(configuration)
    assert fake_openai.last_request.authorization == "Bearer sk-rotated"


def test_missing_api_key_variable_gives_a_clear_error(fake_openai, monkeypatch):
    configuration = ModelConfigurationFactory(
        name="Hosted judge", base_url=fake_openai.base_url, api_key_env="HOSTED_JUDGE_API_KEY"
    )
    monkeypatch.delenv("HOSTED_JUDGE_API_KEY", raising=False)
    with pytest.raises(LLMError) as caught:
        ask(configuration)
    assert (
        "Set the environment variable HOSTED_JUDGE_API_KEY for configuration 'Hosted judge'"
        in caught.value.message
    )
    assert fake_openai.request_count == 0
    assert LLMCall.objects.get().outcome == CallOutcome.FAILED


def test_blank_key_variable_sends_a_placeholder_for_local_servers(fake_openai, configuration):
    ask(configuration)
    assert fake_openai.last_request.authorization.startswith("Bearer ")


def test_unknown_role_is_refused(configuration):
    with pytest.raises(ValueError, match="Unknown model role"):
        chat(configuration=configuration, messages=HELLO, role="oracle", purpose="tests")


def test_switched_off_configuration_is_refused(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, is_active=False)
    with pytest.raises(LLMError, match="switched off"):
        ask(configuration)
    assert fake_openai.request_count == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_calls_share_one_client_and_each_is_recorded(fake_openai):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.latency = 0.05
    fake_openai.responder = lambda request: request.messages[-1]["content"]

    def one(index: int) -> str:
        try:
            return ask(configuration, messages=[{"role": "user", "content": f"q{index}"}]).text
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        texts = list(pool.map(one, range(16)))
    assert texts == [f"q{i}" for i in range(16)]
    assert LLMCall.objects.filter(outcome=CallOutcome.SUCCESS).count() == 16
