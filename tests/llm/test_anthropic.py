"""The Anthropic provider through the official SDK against a local Messages API (fake_anthropic):
request shape and headers, structured output (JSON-schema output and a forced tool call),
retries on 429 with retry-after and 529 overloaded, prompt caching and its price."""

from decimal import Decimal

import pytest
from django.db.models import Sum

from evaluations.schemas import JudgeVerdict
from llm import transport
from llm.exceptions import LLMError
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall, ModelConfiguration
from tests.fake_openai import Behaviour
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "Did the assistant suggest professional help?"}]
VALID = {"present": True, "justification": "It named a counsellor.", "evidence": []}
LONG_SYSTEM = "You are the judge of a conversation. " * 20


def claude(server, **fields) -> ModelConfiguration:
    values = {
        "provider": "anthropic",
        "base_url": server.base_url,
        "model_id": "claude-test",
        "api_key_env": "ANTHROPIC_API_KEY",
        "max_tokens": 300,
    }
    return ModelConfigurationFactory(**{**values, **fields})


def ask(configuration, messages=PROMPT):
    return structured(
        configuration=configuration,
        messages=messages,
        schema=JudgeVerdict,
        role="judge",
        purpose="tests.verdict",
        use_cache=False,
    )


def test_chat_sends_a_messages_request_and_records_usage(fake_anthropic):
    configuration = claude(fake_anthropic, system_prompt="Be brief.")
    fake_anthropic.enqueue(content="Hello there.", prompt_tokens=12, completion_tokens=3)
    result = chat(configuration=configuration, messages=PROMPT, role="target", purpose="t")
    assert result.text == "Hello there."
    request = fake_anthropic.last_request
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer sk-ant-test"
    assert request.headers["anthropic-version"]
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 300
    assert request.body["system"][0]["text"] == "Be brief."
    assert request.body["messages"] == PROMPT
    assert "seed" not in request.body
    call = LLMCall.objects.get()
    assert (call.prompt_tokens, call.completion_tokens) == (12, 3)
    assert call.finish_reason == "end_turn"
    # 12 × 2 + 3 × 8 per million tokens.
    assert call.cost_estimate == Decimal("0.00004800")


def test_json_schema_output_is_asked_through_output_config(fake_anthropic):
    configuration = claude(fake_anthropic)
    fake_anthropic.enqueue(json=VALID)
    assert ask(configuration).output.present is True
    body = fake_anthropic.last_request.body
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["format"]["schema"]["title"] == "JudgeVerdict"
    assert "tools" not in body


def test_a_forced_tool_call_carries_the_schema_and_its_input_is_the_reply(fake_anthropic):
    configuration = claude(fake_anthropic, structured_output="json_object_schema")
    fake_anthropic.enqueue(json=VALID)
    result = ask(configuration)
    assert result.output.justification == "It named a counsellor."
    body = fake_anthropic.last_request.body
    assert body["tool_choice"] == {"type": "tool", "name": "reply"}
    assert body["tools"][0]["input_schema"]["title"] == "JudgeVerdict"
    assert LLMCall.objects.get().finish_reason == "tool_use"


def test_a_refused_output_config_moves_to_the_forced_tool_call(fake_anthropic):
    configuration = claude(fake_anthropic)
    fake_anthropic.enqueue(
        status=400,
        body={
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "output_config.format: this model does not support structured outputs",
            },
        },
    )
    fake_anthropic.enqueue(json=VALID)
    assert ask(configuration).output.present is True
    configuration.refresh_from_db()
    assert configuration.structured_output == "json_object_schema"
    assert "tool_choice" in fake_anthropic.last_request.body


def test_429_with_retry_after_and_529_overloaded_are_retried(fake_anthropic, monkeypatch):
    waits = []
    monkeypatch.setattr(transport, "sleep", waits.append)
    configuration = claude(fake_anthropic)
    fake_anthropic.enqueue(status=429, headers={"retry-after": "0.02"})
    fake_anthropic.enqueue(status=529)
    fake_anthropic.enqueue(json=VALID)
    assert ask(configuration).output.present is True
    outcomes = list(LLMCall.objects.order_by("id").values_list("outcome", "http_status"))
    assert outcomes == [
        (CallOutcome.RATE_LIMITED, 429),
        (CallOutcome.HTTP_ERROR, 529),
        (CallOutcome.SUCCESS, 200),
    ]
    assert waits[0] == pytest.approx(0.02)
    assert "overloaded_error" in LLMCall.objects.get(http_status=529).response_text


def test_a_wrong_key_is_named_and_not_retried(fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    with pytest.raises(LLMError, match="rejected the API key") as caught:
        ask(claude(fake_anthropic))
    assert caught.value.status_code == 401
    assert fake_anthropic.request_count == 1


def test_malformed_and_cut_off_replies_are_retried_and_asked_again(fake_anthropic, settings):
    configuration = claude(fake_anthropic)
    fake_anthropic.enqueue(malformed="no_choices")
    fake_anthropic.enqueue(content='{"present": tr', finish_reason="length")
    fake_anthropic.enqueue(json=VALID)
    assert ask(configuration).output.present is True
    outcomes = list(LLMCall.objects.order_by("id").values_list("outcome", flat=True))
    assert outcomes == [CallOutcome.MALFORMED, CallOutcome.INVALID_OUTPUT, CallOutcome.SUCCESS]
    bodies = [r.body for r in fake_anthropic.requests]
    assert bodies[-1]["max_tokens"] == 600  # asked again with twice the limit


def test_the_system_prompt_is_cached_and_cached_tokens_are_priced_as_configured(fake_anthropic):
    configuration = claude(
        fake_anthropic,
        price_per_million_input_tokens=Decimal("3"),
        price_per_million_output_tokens=Decimal("15"),
        price_per_million_cached_input_tokens=Decimal("0.3"),
        price_per_million_cache_write_tokens=Decimal("3.75"),
    )
    messages = [{"role": "system", "content": LONG_SYSTEM}, *PROMPT]
    fake_anthropic.responder = lambda request: VALID
    first, second = ask(configuration, messages), ask(configuration, messages)
    assert fake_anthropic.requests[0].body["system"][0]["cache_control"] == {"type": "ephemeral"}
    written, read = LLMCall.objects.order_by("id")
    assert written.cache_write_tokens > 0
    assert written.cached_prompt_tokens == 0
    assert read.cached_prompt_tokens == written.cache_write_tokens
    cached = read.cached_prompt_tokens
    plain = read.prompt_tokens - cached
    expected = (
        Decimal(plain) * 3 + Decimal(cached) * Decimal("0.3") + Decimal(read.completion_tokens) * 15
    ) / Decimal(1_000_000)
    assert read.cost_estimate == expected.quantize(Decimal("0.00000001"))
    assert read.cost_estimate < written.cost_estimate
    total = LLMCall.objects.aggregate(total=Sum("cost_estimate"))["total"]
    assert first.cost + second.cost == total


def test_a_url_of_another_provider_is_explained_when_saved():
    configuration = ModelConfiguration(
        name="Wrong", base_url="https://api.anthropic.com", model_id="claude", api_key_env=""
    )
    with pytest.raises(Exception, match="choose the provider 'Anthropic"):
        configuration.full_clean()


def test_a_behaviour_scripted_for_both_servers_reads_the_same(fake_anthropic):
    fake_anthropic.enqueue(**Behaviour(content="same").__dict__)
    configuration = claude(fake_anthropic)
    assert (
        chat(configuration=configuration, messages=PROMPT, role="target", purpose="t").text
        == "same"
    )


def test_a_declined_answer_is_recorded_as_refused_and_not_sent_again(fake_anthropic):
    fake_anthropic.enqueue(
        body={
            "id": "msg_refused",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": "refusal",
            "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 0},
        }
    )
    with pytest.raises(LLMError, match="declined to answer \\(stop_reason refusal\\)"):
        chat(configuration=claude(fake_anthropic), messages=PROMPT, role="target", purpose="t")
    assert fake_anthropic.request_count == 1
    call = LLMCall.objects.get()
    assert (call.outcome, call.finish_reason, call.prompt_tokens) == ("refused", "refusal", 11)
