"""The local model server itself: it must hold up under the benchmark's concurrency."""

import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from tests.fake_openai import Behaviour


def post(server, content: str) -> dict:
    request = urllib.request.Request(  # noqa: S310 - local test server
        f"{server.base_url}/chat/completions",
        data=json.dumps(
            {"model": "m", "messages": [{"role": "user", "content": content}]}
        ).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return json.loads(response.read())


def test_serves_32_concurrent_clients_with_fixed_latency(fake_openai):
    fake_openai.latency = 0.05
    fake_openai.responder = lambda request: request.messages[-1]["content"].upper()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=32) as pool:
        replies = list(pool.map(lambda i: post(fake_openai, f"hello {i}"), range(64)))
    elapsed = time.monotonic() - started
    assert [r["choices"][0]["message"]["content"] for r in replies] == [
        f"HELLO {i}" for i in range(64)
    ]
    assert fake_openai.request_count == 64
    # Served in parallel: 64 sequential requests would take at least 3.2 s.
    assert elapsed < 2.0
    assert replies[0]["usage"]["total_tokens"] > 0
    assert fake_openai.last_request.authorization == "Bearer k"


def test_queued_behaviours_come_before_the_responder(fake_openai):
    fake_openai.responder = lambda request: Behaviour(content="from the responder")
    fake_openai.enqueue(json={"a": 1})
    assert json.loads(post(fake_openai, "x")["choices"][0]["message"]["content"]) == {"a": 1}
    assert post(fake_openai, "y")["choices"][0]["message"]["content"] == "from the responder"
