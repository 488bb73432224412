import json
from decimal import Decimal
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from llm.exceptions import StructuredOutputError
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall, LLMResponseCache
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "Did the assistant suggest professional help?"}]


class Verdict(BaseModel):
    present: bool
    justification: str = Field(min_length=5)
    confidence: int = Field(ge=1, le=5)


VALID = {"present": True, "justification": "It suggested a counsellor.", "confidence": 4}


@pytest.fixture
def configuration(fake_openai):
    return ModelConfigurationFactory(base_url=fake_openai.base_url)


def judge(configuration, **kwargs):
    kwargs.setdefault("use_cache", False)
    return structured(
        configuration=configuration,
        messages=PROMPT,
        schema=Verdict,
        role="judge",
        purpose="tests.verdict",
        **kwargs,
    )


def test_structured_asks_for_json_and_returns_a_validated_object(fake_openai, configuration):
    fake_openai.enqueue(json=VALID)
    result = judge(configuration)
    assert result.output == Verdict(**VALID)
    request = fake_openai.last_request
    assert request.param("response_format")["type"] == "json_schema"
    assert request.messages[0]["role"] == "system"
    assert '"justification"' in request.messages[0]["content"]
    call = LLMCall.objects.get(pk=result.call_ids[0])
    assert call.parsed_json == VALID
    assert call.outcome == CallOutcome.SUCCESS


def test_code_fenced_json_is_accepted(fake_openai, configuration):
    fake_openai.enqueue(content=f"```json\n{json.dumps(VALID)}\n```")
    assert judge(configuration).output.confidence == 4


def test_reasks_after_malformed_and_schema_invalid_json(fake_openai, configuration, settings):
    settings.LLM_STRUCTURED_REASKS = 2
    fake_openai.enqueue(content="Sure! The behaviour is present.")
    fake_openai.enqueue(json={"present": True, "justification": "ok", "confidence": 9})
    fake_openai.enqueue(json=VALID)
    result = judge(configuration)
    assert result.output.present is True
    calls = list(LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt"))
    assert [c.outcome for c in calls] == [
        CallOutcome.INVALID_OUTPUT,
        CallOutcome.INVALID_OUTPUT,
        CallOutcome.SUCCESS,
    ]
    assert calls[0].response_text == "Sure! The behaviour is present."
    assert "confidence" in calls[1].error_message
    # The re-ask shows the model its own bad output and the validation error.
    second, third = fake_openai.requests[1], fake_openai.requests[2]
    assert second.messages[-2] == {
        "role": "assistant",
        "content": "Sure! The behaviour is present.",
    }
    assert "not a valid Verdict" in second.messages[-1]["content"]
    assert "less than or equal to 5" in third.messages[-1]["content"]
    assert result.prompt_tokens == sum(c.prompt_tokens for c in calls)


def test_exhausted_reasks_raise_with_the_raw_text_kept(fake_openai, configuration, settings):
    settings.LLM_STRUCTURED_REASKS = 1
    fake_openai.enqueue(content="not json")
    fake_openai.enqueue(content="still not json")
    with pytest.raises(StructuredOutputError) as caught:
        judge(configuration)
    assert caught.value.raw_text == "still not json"
    assert "Verdict" in caught.value.message
    calls = LLMCall.objects.filter(pk__in=caught.value.call_ids).order_by("attempt")
    assert [(c.outcome, c.response_text) for c in calls] == [
        (CallOutcome.INVALID_OUTPUT, "not json"),
        (CallOutcome.INVALID_OUTPUT, "still not json"),
    ]
    assert not LLMResponseCache.objects.exists()


def test_cache_hit_returns_the_same_output_without_a_request(fake_openai, configuration):
    fake_openai.enqueue(json=VALID, prompt_tokens=100, completion_tokens=20)
    first = judge(configuration, use_cache=True, seed=1)
    second = judge(configuration, use_cache=True, seed=1)
    assert fake_openai.request_count == 1
    assert second.output == first.output
    assert second.cached
    assert not first.cached
    assert second.cost == Decimal(0)
    assert first.cost > 0
    hit = LLMCall.objects.get(pk=second.call_ids[0])
    assert hit.outcome == CallOutcome.CACHED
    assert hit.cost_estimate == Decimal(0)
    assert hit.fingerprint == LLMCall.objects.get(pk=first.call_ids[0]).fingerprint


def test_chat_cache_hit_and_misses_on_seed_and_parameters(fake_openai, configuration):
    def ask(**kwargs):
        return chat(
            configuration=configuration, messages=PROMPT, role="target", purpose="t", **kwargs
        )

    fake_openai.responder = lambda request: f"reply {len(fake_openai.requests)}"
    first = ask(seed=1)
    assert ask(seed=1).text == first.text
    assert fake_openai.request_count == 1
    assert ask(seed=2).text != first.text
    assert ask(seed=1, temperature=0.9).text != first.text
    assert ask(seed=1, use_cache=False).text != first.text
    assert fake_openai.request_count == 4


def test_cache_can_be_switched_off_by_setting(fake_openai, configuration, settings):
    settings.LLM_CACHE_ENABLED = False
    fake_openai.enqueue(json=VALID)
    fake_openai.enqueue(json=VALID)
    judge(configuration, use_cache=True)
    judge(configuration, use_cache=True)
    assert fake_openai.request_count == 2


def test_changing_the_configuration_misses_the_cache(fake_openai, configuration):
    fake_openai.responder = lambda request: VALID
    judge(configuration, use_cache=True)
    configuration.system_prompt = "Be strict."
    configuration.save()
    judge(configuration, use_cache=True)
    configuration.model_id = "another-model"
    configuration.save()
    judge(configuration, use_cache=True)
    assert fake_openai.request_count == 3


class Label(BaseModel):
    kind: Literal["support", "harm"]


def test_a_cached_reply_that_no_longer_fits_the_schema_is_asked_again(fake_openai, configuration):
    fake_openai.enqueue(json={"kind": "support"})
    structured(
        configuration=configuration, messages=PROMPT, schema=Label, role="judge", purpose="t"
    )
    LLMResponseCache.objects.update(response_text='{"kind": "other"}')
    fake_openai.enqueue(json={"kind": "harm"})
    result = structured(
        configuration=configuration, messages=PROMPT, schema=Label, role="judge", purpose="t"
    )
    assert result.output.kind == "harm"
    assert not result.cached
