"""The engine's call journal: what a killed process sent and heard back is restored once."""

import asyncio
import json
import time
import uuid

import pytest
from pydantic import BaseModel

from evaluations.engine import journal
from llm import limits, transport
from llm.aio import AsyncGateway
from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall, LLMResponseCache
from llm.plan import CacheLookup, CacheStore, chat_steps, structured_steps
from llm.recording import CallRecorder
from tests.llm.factories import ModelConfigurationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


class Sink:
    """A journaling sink that never reaches the database (its process is about to die)."""

    def __init__(self, journal_file):
        self.journal = journal_file

    def __call__(self, call, prompt):
        self.journal.write("done", call, prompt)

    def sending(self, call, prompt):
        self.journal.write("sent", call, prompt)


def test_a_dead_batchs_journal_is_replayed_once_with_unknown_outcomes(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    file = journal.Journal()
    recorder = CallRecorder(
        configuration=ModelConfigurationFactory(price_per_million_input_tokens=1000),
        role="target",
        purpose="tests.journal",
        fingerprint="f" * 64,
        sink=Sink(file),
    )
    messages = [{"role": "user", "content": "Hello"}]
    recorder.sending(messages=messages, parameters={})
    recorder.record(
        messages=messages,
        parameters={},
        outcome=CallOutcome.SUCCESS,
        response_text="Hi",
        prompt_tokens=7,
        completion_tokens=2,
    )
    recorder.sending(messages=messages, parameters={"max_tokens": 9})  # no reply: killed
    file.close(written=False)
    assert LLMCall.objects.count() == 0

    assert journal.journals_replay() == 2
    rows = list(LLMCall.objects.order_by("attempt"))
    assert [(r.attempt, r.outcome) for r in rows] == [
        (1, CallOutcome.SUCCESS),
        (2, CallOutcome.UNKNOWN),
    ]
    assert rows[0].response_text == "Hi"
    assert rows[0].prompt_tokens + rows[0].completion_tokens == 9
    assert rows[0].cost_estimate > 0
    assert rows[1].prompt_messages == messages
    assert rows[1].parameters == {"max_tokens": 9}
    assert rows[1].cost_estimate == 0
    assert not list(journal.journal_dir().iterdir())  # replayed files are removed
    assert journal.journals_replay() == 0
    assert LLMCall.objects.count() == 2


def test_a_journal_in_use_is_left_alone(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    file = journal.Journal()
    assert journal.journals_replay() == 0
    assert file.path.exists()
    file.close(written=True)
    assert not file.path.exists()


def test_another_databases_journal_is_never_replayed_here(settings, tmp_path, monkeypatch):
    """Two deployments (or test runs) sharing a folder: a dead batch's journal written for
    another database is not replayed into this one's call log."""
    from django.db import connection

    settings.VAR_DIR = tmp_path
    configuration = ModelConfigurationFactory()
    ours = journal.journal_dir()
    monkeypatch.setitem(connection.settings_dict, "NAME", "another-database")
    assert journal.journal_dir() != ours
    file = journal.Journal()
    recorder = CallRecorder(
        configuration=configuration,
        role="target",
        purpose="tests.journal",
        fingerprint="f" * 64,
        sink=Sink(file),
    )
    recorder.sending(messages=[{"role": "user", "content": "Hello"}], parameters={})
    file.close(written=False)
    monkeypatch.undo()

    assert journal.journals_replay() == 0
    assert LLMCall.objects.count() == 0
    assert file.path.exists()


class Verdict(BaseModel):
    present: bool
    justification: str


def run_until_killed(steps) -> None:
    """Drive a gateway call's steps until its reply is to be cached, then stop: the worker is
    killed after the reply was journaled and before its buffered cache entry was written."""
    reply = None
    while True:
        step = steps.send(reply)
        if isinstance(step, CacheStore):
            return
        reply = None if isinstance(step, CacheLookup) else transport.run_step(step)


def test_a_replayed_reply_answers_the_request_asked_again_from_the_cache(
    settings, tmp_path, fake_openai
):
    settings.VAR_DIR = tmp_path
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    messages = [{"role": "user", "content": "Did the assistant suggest help?"}]
    verdict = '{"present": true, "justification": "It named a counsellor."}'
    fake_openai.enqueue(content=verdict)
    fake_openai.enqueue(content="Hello there.")
    file = journal.Journal()
    asked = {"configuration": configuration, "messages": messages, "purpose": "tests.journal"}
    run_until_killed(structured_steps(**asked, schema=Verdict, role="judge", sink=Sink(file)))
    run_until_killed(chat_steps(**asked, role="target", sink=Sink(file)))
    file.close(written=False)
    assert fake_openai.request_count == 2
    assert LLMResponseCache.objects.count() == 0

    assert journal.journals_replay() == 2
    assert LLMResponseCache.objects.count() == 2

    result = structured(**asked, schema=Verdict, role="judge")
    assert result.cached
    assert result.output == Verdict(present=True, justification="It named a counsellor.")
    assert chat(**asked, role="target").text == "Hello there."
    assert fake_openai.request_count == 2  # neither request reached the server again


def test_a_replayed_reply_cut_off_at_max_tokens_is_not_cached(settings, tmp_path, fake_openai):
    settings.VAR_DIR = tmp_path
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.enqueue(content="Hello th", finish_reason="length")
    file = journal.Journal()
    run_until_killed(
        chat_steps(
            configuration=configuration,
            messages=[{"role": "user", "content": "Hello"}],
            role="target",
            purpose="tests.journal",
            sink=Sink(file),
        )
    )
    file.close(written=False)

    assert journal.journals_replay() == 1
    assert LLMCall.objects.get().finish_reason == "length"
    assert LLMResponseCache.objects.count() == 0


def _journal_ops(path) -> list[str]:
    return [json.loads(line)["op"] for line in path.read_bytes().splitlines()]


def test_attempts_queued_behind_the_concurrency_limit_are_not_journaled_as_sent(
    settings, tmp_path, fake_openai
):
    """Only an attempt holding its slot is "sent": a kill while others wait for one must not
    leave them in the journal, to be restored as attempts that never reached the endpoint."""
    if not settings.LLM_LIMITS_REDIS_URL:
        pytest.skip("the engine's permits come from Redis here (the PostgreSQL pass)")
    settings.VAR_DIR = tmp_path
    settings.LLM_LIMITS_KEY_PREFIX = f"test-journal:{uuid.uuid4().hex}"
    limits.backend_set(limits.RedisLimits(settings.LLM_LIMITS_REDIS_URL))
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_concurrency=1)
    fake_openai.latency = 0.3
    file = journal.Journal()

    async def scenario() -> tuple[list[str], int]:
        gateway = AsyncGateway(concurrency=8)
        calls = [
            asyncio.ensure_future(
                gateway.drive(
                    chat_steps(
                        configuration=configuration,
                        messages=[{"role": "user", "content": f"Hello {n}"}],
                        role="target",
                        purpose="tests.journal",
                        use_cache=False,
                        sink=Sink(file),
                    ),
                    sink=None,  # no cache step and no database backend: never used
                )
            )
            for n in range(5)
        ]
        # Until the first is at the endpoint (a loaded machine may take longer than any fixed
        # pause); the other four then wait for its slot for the reply's 0.3 s.
        deadline = time.monotonic() + 10
        while fake_openai.in_flight < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        while_waiting = _journal_ops(file.path)
        in_flight = fake_openai.in_flight
        await asyncio.gather(*calls)
        await gateway.close()
        return while_waiting, in_flight

    try:
        while_waiting, in_flight = asyncio.run(scenario())
    finally:
        limits.backend_set(None)
    file.close(written=False)
    assert (while_waiting, in_flight) == (["sent"], 1)
    assert sorted(_journal_ops(file.path)) == ["done"] * 5 + ["sent"] * 5
    assert fake_openai.request_count == 5
