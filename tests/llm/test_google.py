"""The Google provider through the official google-genai SDK against a local Gemini API
(fake_gemini): request shape, JSON schema through response_json_schema / response_schema,
retries on 429 with RetryInfo, usage with implicitly cached tokens and its price."""

import json
from decimal import Decimal

import pytest

from evaluations.schemas import JudgeVerdict
from llm import transport
from llm.exceptions import LLMError
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall
from llm.services import structured_mode_probe
from tests.fake_gemini import blocked, error_body, withheld
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "Did the assistant suggest professional help?"}]
VALID = {"present": True, "justification": "It named a counsellor.", "evidence": []}
LONG_SYSTEM = "You are the judge of a conversation. " * 20


def gemini(server, **fields):
    values = {
        "provider": "google",
        "base_url": server.base_url,
        "model_id": "gemini-test",
        "api_key_env": "GEMINI_API_KEY",
        "max_tokens": 300,
        "seed": 7,
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


def test_chat_sends_generate_content_and_records_usage(fake_gemini):
    configuration = gemini(fake_gemini, system_prompt="Be brief.", temperature=0.3)
    fake_gemini.enqueue(content="Hello there.", prompt_tokens=12, completion_tokens=3)
    result = chat(
        configuration=configuration,
        messages=[*PROMPT, {"role": "assistant", "content": "Yes."}, *PROMPT],
        role="target",
        purpose="t",
    )
    assert result.text == "Hello there."
    request = fake_gemini.last_request
    assert request.path == "/v1/models/gemini-test:generateContent"
    assert request.headers["x-goog-api-key"] == "gm-test"
    assert request.system_text == "Be brief."
    assert [c["role"] for c in request.body["contents"]] == ["user", "model", "user"]
    config = request.generation_config
    assert config["temperature"] == 0.3
    assert config["maxOutputTokens"] == 300
    assert config["seed"] == 7
    call = LLMCall.objects.get()
    assert (call.prompt_tokens, call.completion_tokens, call.finish_reason) == (12, 3, "stop")
    assert call.cost_estimate == Decimal("0.00004800")


def test_json_schema_travels_as_response_json_schema(fake_gemini):
    fake_gemini.enqueue(json=VALID)
    assert ask(gemini(fake_gemini)).output.present is True
    config = fake_gemini.last_request.generation_config
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["title"] == "JudgeVerdict"


def test_json_object_schema_travels_as_the_api_schema_type(fake_gemini):
    fake_gemini.enqueue(json=VALID)
    assert ask(gemini(fake_gemini, structured_output="json_object_schema")).output.present
    config = fake_gemini.last_request.generation_config
    assert config["responseSchema"]["type"].upper() == "OBJECT"
    assert "justification" in config["responseSchema"]["properties"]


def test_429_with_retry_info_and_503_are_retried(fake_gemini, monkeypatch):
    waits = []
    monkeypatch.setattr(transport, "sleep", waits.append)
    fake_gemini.enqueue(status=429)
    fake_gemini.enqueue(status=503)
    fake_gemini.enqueue(json=VALID)
    assert ask(gemini(fake_gemini)).output.present is True
    outcomes = list(LLMCall.objects.order_by("id").values_list("outcome", "http_status"))
    assert outcomes == [
        (CallOutcome.RATE_LIMITED, 429),
        (CallOutcome.HTTP_ERROR, 503),
        (CallOutcome.SUCCESS, 200),
    ]
    assert waits[0] == 0  # the RetryInfo delay of the 429 body


def test_a_wrong_key_is_not_retried(fake_gemini, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "wrong")
    with pytest.raises(LLMError, match="API key not valid"):
        ask(gemini(fake_gemini))
    assert fake_gemini.request_count == 1


def test_cut_off_and_malformed_replies(fake_gemini):
    fake_gemini.enqueue(malformed="no_choices")
    fake_gemini.enqueue(content='{"present": tr', finish_reason="length")
    fake_gemini.enqueue(json=VALID)
    assert ask(gemini(fake_gemini)).output.present is True
    outcomes = list(LLMCall.objects.order_by("id").values_list("outcome", "finish_reason"))
    assert outcomes == [
        (CallOutcome.MALFORMED, ""),
        (CallOutcome.INVALID_OUTPUT, "length"),
        (CallOutcome.SUCCESS, "stop"),
    ]
    assert fake_gemini.last_request.generation_config["maxOutputTokens"] == 600


def test_implicitly_cached_tokens_are_priced_as_configured(fake_gemini):
    configuration = gemini(
        fake_gemini,
        price_per_million_input_tokens=Decimal("1"),
        price_per_million_output_tokens=Decimal("4"),
        price_per_million_cached_input_tokens=Decimal("0.25"),
    )
    fake_gemini.responder = lambda request: VALID
    messages = [{"role": "system", "content": LONG_SYSTEM}, *PROMPT]
    ask(configuration, messages)
    ask(configuration, messages)
    first, second = LLMCall.objects.order_by("id")
    assert first.cached_prompt_tokens == 0
    assert second.cached_prompt_tokens > 0
    plain = second.prompt_tokens - second.cached_prompt_tokens
    expected = (
        Decimal(plain) + Decimal(second.cached_prompt_tokens) * Decimal("0.25")
        + Decimal(second.completion_tokens) * 4
    ) / Decimal(1_000_000)  # fmt: skip
    assert second.cost_estimate == expected.quantize(Decimal("0.00000001"))


def test_an_api_without_response_json_schema_steps_down_to_the_schema_type(fake_gemini):
    fake_gemini.knows_json_schema = False
    fake_gemini.responder = lambda request: VALID
    configuration = gemini(fake_gemini)
    assert ask(configuration).output.present is True
    configuration.refresh_from_db()
    assert configuration.structured_output == "json_object_schema"
    assert "responseJsonSchema" in configuration.structured_output_note
    first, second = LLMCall.objects.order_by("id")
    assert (first.outcome, first.http_status) == (CallOutcome.HTTP_ERROR, 400)
    assert "now asks for json_object_schema" in first.error_message
    assert second.outcome == CallOutcome.SUCCESS


def test_a_model_without_json_mode_steps_down_to_the_prompt(fake_gemini):
    fake_gemini.json_mode = False
    fake_gemini.responder = lambda request: VALID
    configuration = gemini(fake_gemini)
    assert ask(configuration).output.present is True
    configuration.refresh_from_db()
    assert configuration.structured_output == "prompt"
    assert "responseMimeType" not in fake_gemini.last_request.generation_config
    assert fake_gemini.request_count == 4  # json_schema, json_object_schema, json_object, prompt


def test_the_probe_steps_down_on_googles_wording(fake_gemini):
    fake_gemini.knows_json_schema = False
    fake_gemini.responder = lambda request: {"ok": True, "word": "harbour"}
    configuration = gemini(fake_gemini)
    probe = structured_mode_probe(configuration=configuration)
    assert probe.mode == "json_object_schema", probe.summary
    assert probe.findings[0].detail == "refused (HTTP 400)"


@pytest.mark.parametrize("reason", ["PROHIBITED_CONTENT", "SAFETY", "BLOCKLIST", "OTHER"])
def test_a_blocked_prompt_is_recorded_as_refused_and_not_sent_again(fake_gemini, reason):
    fake_gemini.enqueue(body=blocked(reason))
    with pytest.raises(LLMError, match=f"the prompt was blocked \\({reason}\\)") as raised:
        ask(gemini(fake_gemini))
    assert fake_gemini.request_count == 1
    call = LLMCall.objects.get()
    assert (call.outcome, call.prompt_tokens) == (CallOutcome.REFUSED, 9)
    assert "not sent again" in call.error_message
    assert raised.value.failure.kind == "refused"


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST"])
def test_a_withheld_reply_is_recorded_as_refused(fake_gemini, reason):
    fake_gemini.enqueue(body=withheld(reason))
    with pytest.raises(LLMError, match=f"withheld \\(finishReason {reason}\\)"):
        chat(configuration=gemini(fake_gemini), messages=PROMPT, role="target", purpose="t")
    assert fake_gemini.request_count == 1
    assert LLMCall.objects.get().finish_reason == reason.lower()


def test_a_rate_limit_in_googles_words_is_waited_out_whatever_the_status(fake_gemini, monkeypatch):
    waits = []
    monkeypatch.setattr(transport, "sleep", waits.append)
    fake_gemini.enqueue(
        status=403, body=error_body(403, "User Rate Limit Exceeded (userRateLimitExceeded)")
    )
    fake_gemini.enqueue(json=VALID)
    assert ask(gemini(fake_gemini)).output.present is True
    outcomes = list(LLMCall.objects.order_by("id").values_list("outcome", "http_status"))
    assert outcomes == [(CallOutcome.RATE_LIMITED, 403), (CallOutcome.SUCCESS, 200)]


@pytest.mark.parametrize(
    ("unknown", "mode"),
    [
        ({"responseJsonSchema"}, "json_object_schema"),
        ({"responseJsonSchema", "responseSchema"}, "json_object"),
        ({"responseJsonSchema", "responseSchema", "responseMimeType"}, "prompt"),
    ],
)
def test_the_probe_steps_down_past_every_field_the_api_does_not_know(fake_gemini, unknown, mode):
    fake_gemini.unknown_fields = set(unknown)
    fake_gemini.responder = lambda request: {"ok": True, "word": "harbour"}
    probe = structured_mode_probe(configuration=gemini(fake_gemini))
    assert probe.mode == mode, probe.summary
    refused = [f for f in probe.findings if not f.works]
    assert [f.detail for f in refused] == ["refused (HTTP 400)"] * len(unknown)
    for call in LLMCall.objects.filter(outcome=CallOutcome.HTTP_ERROR):
        assert "Unknown name" in call.error_message
        assert "INVALID_ARGUMENT" in call.error_message


def test_the_probe_steps_down_to_the_prompt_for_a_model_without_json_mode(fake_gemini):
    fake_gemini.json_mode = False
    fake_gemini.responder = lambda request: {"ok": True, "word": "harbour"}
    probe = structured_mode_probe(configuration=gemini(fake_gemini))
    assert probe.mode == "prompt", probe.summary
    assert fake_gemini.request_count == 4


@pytest.mark.parametrize(
    "message",
    [
        'Invalid JSON payload received. Unknown name "responseJsonSchema" at '
        "'generation_config': Cannot find field.",
        "Invalid JSON payload received. Unknown name \"responseSchema\" at 'generation_config'",
        "Invalid JSON payload received. Unknown name \"responseMimeType\" at 'generation_config'",
        "JSON mode is not enabled for models/gemini-1.0-pro",
        "generation_config.response_mime_type: unsupported for this model",
    ],
)
def test_googles_format_wording_is_googles_own(message):
    """Each provider declares the wording of its refusals: Google's steps its configuration
    down; the same body from another provider's server is an ordinary refusal."""
    from llm.providers import registry
    from llm.providers.errors import status_failure

    body = json.dumps(error_body(400, message))
    google = status_failure(
        facts=registry.facts("google"), status=400, body=body, where="x", retry_after=None
    )
    assert (google.kind, google.format_refused) == ("refused", True)
    anthropic = status_failure(
        facts=registry.facts("anthropic"), status=400, body=body, where="x", retry_after=None
    )
    assert anthropic.format_refused is False


def test_a_blocked_prompt_bills_its_prompt_once(fake_gemini):
    fake_gemini.enqueue(body=blocked("PROHIBITED_CONTENT", prompt_tokens=1000))
    configuration = gemini(fake_gemini)  # $2 per million input tokens
    with pytest.raises(LLMError):
        ask(configuration)
    call = LLMCall.objects.get()
    assert fake_gemini.request_count == 1
    assert (call.prompt_tokens, call.completion_tokens) == (1000, 0)
    assert call.finish_reason == "prohibited_content"
    assert call.cost_estimate == Decimal("0.002")


@pytest.mark.parametrize(
    ("unknown", "json_mode", "mode"),
    [({"responseJsonSchema"}, True, "json_object_schema"), (set(), False, "prompt")],
)
def test_configure_model_for_google_steps_down_on_googles_refusals(
    fake_gemini, capsys, unknown, json_mode, mode
):
    from django.core.management import call_command

    from llm.models import ModelConfiguration

    fake_gemini.unknown_fields = set(unknown)
    fake_gemini.json_mode = json_mode
    fake_gemini.responder = lambda request: {"ok": True, "word": "harbour"}
    call_command(
        "configure_model", "--name", "Gem", "--provider", "google",
        "--base-url", fake_gemini.base_url, "--model-id", "gemini-test",
        "--api-key-env", "GEMINI_API_KEY", "--roles", "judge",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert "cannot be used yet" not in out
    assert "json_schema: refused (HTTP 400)" in out
    assert f"{mode}: works" in out
    assert ModelConfiguration.objects.get(name="Gem").structured_output == mode
