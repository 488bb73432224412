"""An attempt is journaled as sent as its request leaves, by every provider and driver.

A worker killed between the journal's "sent" line and the request leaving left an attempt of
unknown outcome the provider never received; the line is now written by the connection as the
request's bytes are (`llm.egress_http.on_sent`), so an attempt waiting for a slot or a
connection, or refused one, is never "sent".
"""

import asyncio
import json
import socket
import threading
import time

import pytest

from evaluations.engine import journal
from llm import transport
from llm.aio import AsyncGateway
from llm.exceptions import LLMError
from llm.plan import CacheLookup, chat_steps
from tests.evaluations.test_journal import Sink
from tests.llm.factories import ModelConfigurationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

PROVIDERS = {
    "fake_openai": {},
    "fake_anthropic": {
        "provider": "anthropic",
        "model_id": "claude-test",
        "api_key_env": "ANTHROPIC_API_KEY",
    },
    "fake_gemini": {
        "provider": "google",
        "model_id": "gemini-test",
        "api_key_env": "GEMINI_API_KEY",
    },
}


@pytest.fixture(params=sorted(PROVIDERS))
def endpoint(request):
    """A fake of the provider's own API and a configuration pointing at it."""
    server = request.getfixturevalue(request.param)
    configuration = ModelConfigurationFactory(
        base_url=server.base_url, max_tokens=200, **PROVIDERS[request.param]
    )
    return server, configuration


def _ops(path) -> list[str]:
    return [json.loads(line)["op"] for line in path.read_bytes().splitlines()]


def _steps(configuration, file, text="Hello"):
    return chat_steps(
        configuration=configuration,
        messages=[{"role": "user", "content": text}],
        role="target",
        purpose="tests.journal",
        use_cache=False,
        sink=Sink(file),
    )


def _drive_sync(steps):
    reply = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as done:
            return done.value
        reply = None if isinstance(step, CacheLookup) else transport.run_step(step)


def test_the_engine_journals_sent_as_the_request_leaves_and_not_before(
    settings, tmp_path, endpoint
):
    settings.VAR_DIR = tmp_path
    server, configuration = endpoint
    server.latency = 0.4
    file = journal.Journal()

    async def scenario() -> tuple[list[str], int]:
        gateway = AsyncGateway(concurrency=4)
        call = asyncio.ensure_future(gateway.drive(_steps(configuration, file), sink=None))
        deadline = time.monotonic() + 60  # the SDK's first import, on a loaded machine
        while server.in_flight < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        at_endpoint = (_ops(file.path), server.in_flight)
        await call
        await gateway.close()
        return at_endpoint

    at_endpoint = asyncio.run(scenario())
    file.close(written=False)
    assert at_endpoint == (["sent"], 1)
    assert _ops(file.path) == ["sent", "done"]
    assert server.request_count == 1


def test_the_synchronous_gateway_journals_sent_as_the_request_leaves(settings, tmp_path, endpoint):
    settings.VAR_DIR = tmp_path
    server, configuration = endpoint
    server.latency = 0.4
    file = journal.Journal()
    seen: list = []

    def watch() -> None:
        deadline = time.monotonic() + 60  # the SDK's first import, on a loaded machine
        while server.in_flight < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        seen.append(_ops(file.path))

    watcher = threading.Thread(target=watch)
    watcher.start()
    _drive_sync(_steps(configuration, file))
    watcher.join()
    file.close(written=False)
    assert seen == [["sent"]]
    assert _ops(file.path) == ["sent", "done"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the probe is closed


@pytest.mark.parametrize("driver", ["engine", "sync"])
def test_an_attempt_whose_connection_is_refused_is_recorded_never_sent(settings, tmp_path, driver):
    """The provider never saw it: its rows say so (errors), and none is "outcome unknown"."""
    settings.VAR_DIR = tmp_path
    configuration = ModelConfigurationFactory(
        base_url=f"http://127.0.0.1:{_closed_port()}/v1", max_tokens=50
    )
    file = journal.Journal()
    steps = _steps(configuration, file)

    async def on_the_engine() -> None:
        gateway = AsyncGateway(concurrency=2)
        try:
            await gateway.drive(steps, sink=None)
        finally:
            await gateway.close()

    run = (
        (lambda: asyncio.run(on_the_engine()))
        if driver == "engine"
        else (lambda: _drive_sync(steps))
    )
    with pytest.raises(LLMError):
        run()
    file.close(written=False)
    ops = _ops(file.path)
    assert ops
    assert set(ops) == {"done"}
