"""Malformed HTTP 200 replies, on the wire: retried and recorded as faults, never empty turns."""

import pytest

from llm.exceptions import LLMError
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall
from tests.fake_openai import MALFORMED_SHAPES
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

HELLO = [{"role": "user", "content": "How should I handle stress before exams?"}]


@pytest.fixture
def configuration(fake_openai):
    return ModelConfigurationFactory(base_url=fake_openai.base_url, model_id="test-model")


@pytest.mark.parametrize("shape", MALFORMED_SHAPES)
def test_a_malformed_200_is_retried_and_recorded_as_such(fake_openai, configuration, shape):
    fake_openai.enqueue(malformed=shape)
    fake_openai.enqueue(content="A real answer.")
    result = chat(
        configuration=configuration,
        messages=HELLO,
        role="target",
        purpose="tests.chat",
        use_cache=False,
    )
    assert result.text == "A real answer."
    calls = list(LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt"))
    assert [c.outcome for c in calls] == [CallOutcome.MALFORMED, CallOutcome.SUCCESS]
    assert calls[0].http_status == 200
    assert "HTTP 200 but" in calls[0].error_message or "not JSON" in calls[0].error_message
    assert fake_openai.request_count == 2


def test_a_structured_call_retries_a_null_content_instead_of_re_asking(fake_openai, configuration):
    from pydantic import BaseModel

    class Answer(BaseModel):
        present: bool

    fake_openai.enqueue(malformed="null_content")
    fake_openai.enqueue(json={"present": True})
    result = structured(
        configuration=configuration,
        messages=HELLO,
        schema=Answer,
        role="judge",
        purpose="tests.structured",
        use_cache=False,
    )
    assert result.output.present is True
    # A retry of the same request, not a re-ask quoting an empty reply back to the model.
    assert fake_openai.requests[1].messages == fake_openai.requests[0].messages


def test_persistent_malformed_replies_give_up_retryably(fake_openai, configuration, settings):
    settings.LLM_MAX_RETRIES = 2
    for _ in range(3):
        fake_openai.enqueue(malformed="no_choices")
    with pytest.raises(LLMError) as caught:
        chat(
            configuration=configuration,
            messages=HELLO,
            role="target",
            purpose="tests.chat",
            use_cache=False,
        )
    assert caught.value.retryable
    assert "no `choices`" in caught.value.message
    outcomes = LLMCall.objects.filter(pk__in=caught.value.call_ids).values_list(
        "outcome", flat=True
    )
    assert list(outcomes) == [CallOutcome.MALFORMED] * 3


def test_a_reply_withheld_by_the_content_filter_is_refused_not_retried(fake_openai, configuration):
    fake_openai.enqueue(
        body={
            "id": "chatcmpl-filtered",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None},
                    "finish_reason": "content_filter",
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7},
        }
    )
    with pytest.raises(LLMError, match="withheld the reply \\(finish_reason content_filter\\)"):
        chat(configuration=configuration, messages=HELLO, role="target", purpose="t")
    assert fake_openai.request_count == 1
    assert LLMCall.objects.get().outcome == CallOutcome.REFUSED
