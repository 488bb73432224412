"""The benchmark's asyncio endpoint answers the real openai client as the pipeline needs."""

import asyncio
import concurrent.futures
import json

import openai
import pytest

from benchmarks.fake_endpoint import EndpointProcess
from evaluations import prompts


@pytest.fixture(scope="module")
def endpoint():
    process = EndpointProcess(latency=0.3).start()
    yield process
    process.stop()


def create(client, messages):
    return client.chat.completions.create(model="fake", messages=messages)


def test_answers_each_pipeline_prompt_with_a_valid_completion(endpoint):
    endpoint.reset()
    client = openai.OpenAI(base_url=endpoint.base_url, api_key="k", max_retries=0)
    simulator = create(
        client,
        [
            {"role": "system", "content": "You are role-playing a person chatting with an AI."},
            {"role": "user", "content": prompts.CONVERSATION_START},
        ],
    )
    assert json.loads(simulator.choices[0].message.content)["stop"] is False
    judge = json.loads(
        create(
            client,
            [
                {"role": "system", "content": "You are the judge of ImpactBench."},
                {"role": "user", "content": "Transcript."},
            ],
        )
        .choices[0]
        .message.content
    )
    assert set(judge) == {"present", "justification", "evidence"}

    class FakeTurn:
        def __init__(self, index):
            self.index, self.user_text_clean = index, f"words {index}"

    anchors = [{"text": "First point."}, {"text": "Second point."}, {"text": "Third."}]
    check = create(client, prompts.anchor_check_messages(anchors=anchors, turns=[FakeTurn(1)]))
    numbers = [a["anchor"] for a in json.loads(check.choices[0].message.content)["anchors"]]
    assert numbers == [1, 2, 3]
    target = create(client, [{"role": "user", "content": "hello there"}])
    assert target.choices[0].message.content
    assert target.choices[0].finish_reason == "stop"
    assert target.usage.prompt_tokens == 2
    assert endpoint.stats()["requests"] == 4


def test_holds_many_async_requests_in_flight(endpoint):
    endpoint.reset()

    async def burst():
        client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key="k", max_retries=0)
        replies = await asyncio.gather(
            *(create(client, [{"role": "user", "content": f"n {i}"}]) for i in range(40))
        )
        await client.close()
        return replies

    # Its own thread: a session's browser fixture may hold a running loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        replies = pool.submit(asyncio.run, burst()).result()
    assert len({r.id for r in replies}) == 40
    stats = endpoint.stats()
    assert stats["requests"] == 40
    # All 40 overlap: each waits 0.3 s and the client sends them at once.
    assert stats["max_in_flight"] == 40
    assert stats["in_flight"] == 0
    assert stats["last_end"] - stats["first_start"] >= 0.3
