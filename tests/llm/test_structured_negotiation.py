"""Structured output that negotiates itself, on the wire against a server that refuses
`json_schema` response formats the way llama-cpp-python's server does (HTTP 422 naming the
field), accepts `json_object` with a `schema` (a decoding grammar there) and answers validly."""

import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluations.schemas import JudgeVerdict
from llm.gateway import structured
from llm.models import CallOutcome, LLMCall, ModelConfiguration
from tests.fake_openai import Behaviour
from tests.llm.factories import ModelConfigurationFactory
from tests.ports import free_port

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "Did the assistant suggest professional help?"}]
VALID = {"present": True, "justification": "It named a counsellor.", "evidence": []}


def refusal(kind: str) -> Behaviour:
    """FastAPI's validation error for a response_format type the server does not know."""
    return Behaviour(
        status=422,
        body={
            "detail": [
                {
                    "type": "literal_error",
                    "loc": ["body", "response_format", "type"],
                    "msg": "Input should be 'text' or 'json_object'",
                    "input": kind,
                }
            ]
        },
    )


def llama_cpp_like(refused=("json_schema",), schema_needed=True, answer=VALID):
    """A responder refusing the `refused` response_format types (json_object_schema: a
    json_object carrying a schema) and answering `answer` when a format is accepted."""

    def respond(request):
        fmt = request.param("response_format") or {}
        kind = fmt.get("type", "text")
        if kind == "json_object" and "schema" in fmt:
            kind = "json_object_schema"
        if kind in refused:
            return refusal(fmt.get("type"))
        if schema_needed and kind != "json_object_schema":
            return "Sure! The answer is yes."  # free-form JSON misses the schema
        return answer

    return respond


def test_a_refused_json_schema_moves_the_configuration_down_once_and_says_why(fake_openai):
    fake_openai.responder = llama_cpp_like()
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    assert configuration.structured_output == "json_schema"

    result = structured(
        configuration=configuration,
        messages=PROMPT,
        schema=JudgeVerdict,
        role="judge",
        purpose="tests.verdict",
        use_cache=False,
    )
    assert result.output.present is True
    refused, accepted = LLMCall.objects.order_by("id")
    assert refused.outcome == CallOutcome.HTTP_ERROR
    assert refused.http_status == 422
    assert "refused the json_schema response format" in refused.error_message
    assert "now asks for json_object_schema" in refused.error_message
    assert refused.parameters["response_format"]["type"] == "json_schema"
    assert accepted.outcome == CallOutcome.SUCCESS
    assert accepted.parameters["response_format"]["type"] == "json_object"
    assert accepted.parameters["response_format"]["schema"]["title"] == "JudgeVerdict"
    stored = ModelConfiguration.objects.get(pk=configuration.pk)
    assert stored.structured_output == "json_object_schema"
    assert "refused json_schema" in stored.structured_output_note
    assert "HTTP 422" in stored.structured_output_note

    # Once: the next call asks in the stored mode straight away.
    before = fake_openai.request_count
    structured(
        configuration=stored,
        messages=PROMPT,
        schema=JudgeVerdict,
        role="judge",
        purpose="tests.verdict",
        use_cache=False,
    )
    assert fake_openai.request_count == before + 1


def test_a_server_refusing_every_format_ends_in_prompt_only(fake_openai):
    fake_openai.responder = llama_cpp_like(
        refused=("json_schema", "json_object_schema", "json_object"), schema_needed=False
    )
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    structured(
        configuration=configuration,
        messages=PROMPT,
        schema=JudgeVerdict,
        role="judge",
        purpose="tests.verdict",
        use_cache=False,
    )
    configuration.refresh_from_db()
    assert configuration.structured_output == "prompt"
    assert fake_openai.last_request.param("response_format") is None
    assert LLMCall.objects.filter(http_status=422).count() == 3


def test_a_400_that_does_not_name_the_format_is_not_a_downgrade(fake_openai):
    fake_openai.enqueue(status=400)
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    with pytest.raises(Exception, match="refused the request"):
        structured(
            configuration=configuration,
            messages=PROMPT,
            schema=JudgeVerdict,
            role="judge",
            purpose="tests.verdict",
            use_cache=False,
        )
    configuration.refresh_from_db()
    assert configuration.structured_output == "json_schema"
    assert fake_openai.request_count == 1


def configure(*args):
    call_command("configure_model", *args)


def test_configure_model_without_a_mode_probes_and_stores_the_strongest_that_works(
    fake_openai, capsys
):
    fake_openai.responder = llama_cpp_like(answer={"ok": True, "word": "harbour"})
    configure(
        "--name", "Small", "--base-url", fake_openai.base_url, "--model-id", "smollm2",
        "--api-key-env", "", "--roles", "judge",
    )  # fmt: skip
    out = capsys.readouterr().out
    configuration = ModelConfiguration.objects.get(name="Small")
    assert configuration.structured_output == "json_object_schema"
    assert "json_schema: refused (HTTP 422)" in out
    assert "json_object_schema: works" in out
    assert "json_object_schema: works" in configuration.structured_output_note
    probes = LLMCall.objects.filter(purpose="llm.structured_probe").order_by("id")
    assert [c.parameters.get("response_format", {}).get("type") for c in probes] == [
        "json_schema",
        "json_object",
    ]


def test_configure_model_keeps_the_strongest_accepted_mode_when_no_reply_is_valid(
    fake_openai, capsys
):
    fake_openai.responder = lambda request: "Sure! The answer is yes."
    configure(
        "--name", "Chatty", "--base-url", fake_openai.base_url, "--model-id", "m",
        "--api-key-env", "",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert "json_schema: accepted, reply not valid" in out
    assert "prompt: accepted, reply not valid" in out
    assert ModelConfiguration.objects.get(name="Chatty").structured_output == "json_schema"


def test_configure_model_against_nothing_listening_fails_fast_and_says_so():
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    with pytest.raises(CommandError) as caught:
        configure("--name", "Nowhere", "--base-url", url, "--model-id", "m", "--api-key-env", "")
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert "Saved Nowhere, but it cannot be used yet" in message
    assert "Could not connect to" in message
    assert LLMCall.objects.count() == 1
    assert ModelConfiguration.objects.filter(name="Nowhere").exists()


def test_configure_model_shows_each_retry_while_it_waits(fake_openai, capsys):
    fake_openai.enqueue(status=503)
    fake_openai.responder = lambda request: {"ok": True, "word": "harbour"}
    configure(
        "--name", "Busy", "--base-url", fake_openai.base_url, "--model-id", "m",
        "--api-key-env", "",
    )  # fmt: skip
    out = capsys.readouterr().out
    lines = out.splitlines()
    retry = next(line for line in lines if "attempt 1 of" in line)
    assert "HTTP 503" in retry
    assert "retrying in" in retry
    # Said while the probe went on: after the mode it was trying, before that mode worked.
    assert lines.index(retry) < lines.index("  works")
    assert ModelConfiguration.objects.get(name="Busy").structured_output == "json_schema"


def test_test_this_endpoint_lists_each_retry_on_the_page(fake_openai, client_for, maintainer):
    from django.urls import reverse

    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, api_key_env="")
    fake_openai.enqueue(status=503)
    fake_openai.responder = lambda request: {"ok": True, "word": "harbour"}
    page = (
        client_for(maintainer)
        .post(reverse("llm:configuration-test", args=[configuration.pk]))
        .content.decode()
    )
    assert 'data-testid="endpoint-test-progress"' in page
    assert "attempt 1 of" in page
    assert "HTTP 503" in page
    assert "Endpoint works" in page
