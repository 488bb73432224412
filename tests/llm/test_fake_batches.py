"""The batch APIs of the protocol fakes refuse what the real services refuse, through the
official SDKs: a fake that accepted a malformed batch would let the platform's batch code pass
its tests and fail against the provider."""

import json

import anthropic
import openai
import pytest


def _jsonl(lines: list[dict]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _line(custom_id: str, *, url: str = "/v1/chat/completions", model: str = "m") -> dict:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


@pytest.fixture
def openai_client(fake_openai):
    return openai.OpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([_line("a"), _line("a")], "custom_id 'a' is not unique"),
        ([_line("a", url="/v1/embeddings")], "url must be the batch's endpoint"),
        ([_line("a"), _line("b", model="other")], "the same model"),
    ],
)
def test_the_openai_fake_fails_a_batch_whose_file_breaks_the_rules(
    fake_openai, openai_client, lines, why
):
    uploaded = openai_client.files.create(file=("in.jsonl", _jsonl(lines)), purpose="batch")
    batch = openai_client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert batch.status == "failed"
    assert why in batch.errors.data[0].message
    assert fake_openai.requests == []  # nothing of it was answered


def test_the_openai_fake_refuses_a_window_other_than_24h_and_a_file_not_for_batches(
    fake_openai, openai_client
):
    uploaded = openai_client.files.create(file=("in.jsonl", _jsonl([_line("a")])), purpose="batch")
    with pytest.raises(openai.BadRequestError, match="completion_window"):
        openai_client.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="1h",  # type: ignore[arg-type]
        )
    with pytest.raises(openai.BadRequestError, match="purpose"):
        openai_client.files.create(file=("in.jsonl", _jsonl([_line("a")])), purpose="assistants")


def test_the_openai_fake_answers_each_line_once_with_its_usage(fake_openai, openai_client):
    fake_openai.responder = lambda request: "an answer"
    uploaded = openai_client.files.create(
        file=("in.jsonl", _jsonl([_line("a"), _line("b")])), purpose="batch"
    )
    batch = openai_client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    done = openai_client.batches.retrieve(batch.id)
    assert done.status == "completed"
    lines = [
        json.loads(x) for x in openai_client.files.content(done.output_file_id).text.splitlines()
    ]
    assert sorted(line["custom_id"] for line in lines) == ["a", "b"]
    assert {line["response"]["status_code"] for line in lines} == {200}
    assert [r.batch for r in fake_openai.requests] == ["a", "b"]
    assert len(fake_openai.batches.bill) == 2


@pytest.mark.slow(reason="five batch requests through the Anthropic SDK on a loaded machine")
def test_the_anthropic_fake_refuses_bad_custom_ids_and_errors_invalid_params(fake_anthropic):
    client = anthropic.Anthropic(
        api_key="sk-ant-test", base_url=fake_anthropic.base_url, max_retries=0
    )
    params = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    for custom_id in ("has space", "x" * 65):
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            client.messages.batches.create(requests=[{"custom_id": custom_id, "params": params}])
    with pytest.raises(anthropic.BadRequestError, match="unique"):
        client.messages.batches.create(
            requests=[{"custom_id": "a", "params": params}, {"custom_id": "a", "params": params}]
        )
    broken = {k: v for k, v in params.items() if k != "max_tokens"}
    batch = client.messages.batches.create(
        requests=[{"custom_id": "ok", "params": params}, {"custom_id": "bad", "params": broken}]  # type: ignore[typeddict-item]
    )
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded"
    assert results["bad"].type == "errored"
    assert len(fake_anthropic.batches.bill) == 1
