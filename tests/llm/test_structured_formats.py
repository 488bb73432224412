"""Structured output as local servers need it, checked on the wire against the fake server."""

import pytest
from pydantic import BaseModel, ConfigDict, Field

from evaluations.schemas import JudgeVerdict, SimulatedUserTurn
from llm.exceptions import StructuredOutputError
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall, StructuredMode
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "Did the assistant suggest professional help?"}]
VALID = {"present": True, "justification": "It named a counsellor.", "evidence": []}


def judge(configuration, schema=JudgeVerdict):
    return structured(
        configuration=configuration,
        messages=PROMPT,
        schema=schema,
        role="judge",
        purpose="tests.verdict",
        use_cache=False,
    )


def test_json_schema_response_format_carries_the_schema_and_the_prompt_does_not(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    assert configuration.structured_output == StructuredMode.JSON_SCHEMA
    fake_openai.enqueue(json=VALID)
    assert judge(configuration).output.present is True

    sent = fake_openai.last_request.param("response_format")
    assert sent["type"] == "json_schema"
    assert set(sent["json_schema"]) == {"name", "schema", "strict"}
    assert sent["json_schema"]["name"] == "JudgeVerdict"
    assert sent["json_schema"]["schema"] == JudgeVerdict.model_json_schema()
    # Optional fields make the schema unfit for strict decoding, so strict is off.
    assert sent["json_schema"]["strict"] is False

    system = fake_openai.last_request.messages[0]["content"]
    for raw_schema_word in ("$defs", "$ref", '"properties"'):
        assert raw_schema_word not in system
    assert '"evidence": a list of objects' in system
    assert '"turn": an integer ≥ 1 (required)' in system
    assert '{"present": true, "justification": "…", "evidence": [{"turn": 1' in system


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    score: int = Field(ge=0, le=3)


def test_a_closed_schema_with_every_field_required_is_sent_strict(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.enqueue(json={"label": "kind", "score": 2})
    judge(configuration, schema=Closed)
    assert fake_openai.last_request.param("response_format")["json_schema"]["strict"] is True


def test_the_example_shape_uses_defaults_so_a_simulated_user_is_not_told_to_stop(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.enqueue(json={"message": "hi"})
    judge(configuration, schema=SimulatedUserTurn)
    system = fake_openai.last_request.messages[0]["content"]
    assert '"stop": false' in system


@pytest.mark.parametrize(
    ("mode", "expected"),
    [(StructuredMode.JSON_OBJECT, {"type": "json_object"}), (StructuredMode.PROMPT, None)],
)
def test_configurations_fall_back_to_json_object_or_prompt_only(fake_openai, mode, expected):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, structured_output=mode)
    fake_openai.enqueue(json=VALID)
    assert judge(configuration).output.justification == VALID["justification"]
    assert fake_openai.last_request.param("response_format") == expected
    assert '"present": true or false' in fake_openai.last_request.messages[0]["content"]


def test_finish_reason_is_recorded_on_every_call(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.enqueue(content="A partial answer", finish_reason="length")
    result = chat(
        configuration=configuration, messages=PROMPT, role="target", purpose="t", use_cache=False
    )
    assert LLMCall.objects.get(pk=result.call_ids[0]).finish_reason == "length"
    fake_openai.enqueue(json=VALID)
    result = judge(configuration)
    assert LLMCall.objects.get(pk=result.call_ids[0]).finish_reason == "stop"


def test_a_reply_cut_off_at_max_tokens_is_asked_again_with_a_larger_limit(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_tokens=64)
    fake_openai.enqueue(content='{"present": true, "justif', finish_reason="length")
    fake_openai.enqueue(json=VALID)
    result = judge(configuration)
    assert result.output.present is True
    first, second = fake_openai.requests
    assert first.param("max_tokens") == 64
    assert second.param("max_tokens") == 128
    # The same question again, not a re-ask quoting the truncated text.
    assert second.messages == first.messages
    calls = list(LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt"))
    assert [(c.outcome, c.finish_reason) for c in calls] == [
        (CallOutcome.INVALID_OUTPUT, "length"),
        (CallOutcome.SUCCESS, "stop"),
    ]
    assert calls[0].error_message == "cut off at max_tokens (64)"


def test_the_larger_limit_is_tried_once_then_reported_as_cut_off(fake_openai, settings):
    settings.LLM_STRUCTURED_REASKS = 0
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_tokens=50)
    fake_openai.enqueue(content='{"present": tr', finish_reason="length")
    fake_openai.enqueue(content='{"present": true, "ju', finish_reason="length")
    with pytest.raises(StructuredOutputError) as caught:
        judge(configuration)
    assert fake_openai.request_count == 2
    assert "cut off at max_tokens (100)" in caught.value.message


def test_test_this_endpoint_shows_the_raw_reply_and_what_failed(
    fake_openai, client_for, maintainer
):
    from django.urls import reverse

    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_tokens=16)
    url = reverse("llm:configuration-test", args=[configuration.pk])
    client = client_for(maintainer)

    fake_openai.enqueue(json={"ok": True, "word": "harbour"})
    page = client.post(url).content.decode()
    assert "Endpoint works" in page
    assert fake_openai.last_request.param("response_format")["json_schema"]["name"] == (
        "EndpointCheck"
    )

    # A server that echoes a schema, then runs out of tokens twice, then chats: no mode gives
    # valid JSON, so the strongest it accepted is kept and every mode's reply is shown.
    fake_openai.enqueue(content='{"type": "object", "properties": {}}')
    fake_openai.enqueue(content='{"ok": tr', finish_reason="length")
    fake_openai.enqueue(content='{"ok": true, "wo', finish_reason="length")
    fake_openai.enqueue(content="Sure! Here you go.")
    fake_openai.enqueue(content="Sure! Here you go.")
    page = client.post(url).content.decode()
    assert "Endpoint test failed" in page
    assert "cut off at max_tokens (32)" in page
    assert "Sure! Here you go." in page
    assert page.count("length") >= 2
    assert "json_object_schema: accepted, reply not valid" in page
    configuration.refresh_from_db()
    assert configuration.structured_output == "json_schema"
