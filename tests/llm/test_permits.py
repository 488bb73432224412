"""The engine's permit pools through a limits Redis that goes away and comes back empty: a
waiter that leaves takes nothing with it, and the pool resumes by itself within seconds."""

import asyncio
import logging
import shutil
import threading
import time
import uuid

import pytest
import redis

from llm import limits
from llm.exceptions import LLMError
from llm.gateway import chat
from llm.models import CallOutcome, LLMCall
from llm.permits import PermitPool, RedisBlocks
from tests.llm.factories import ModelConfigurationFactory
from tests.own_redis import OwnRedis, free_port

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.faults,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
    pytest.mark.slow(reason="stops and restarts a redis-server"),
]

PORT = free_port()


@pytest.fixture
def own_redis(tmp_path, settings):
    server = OwnRedis(tmp_path, PORT)
    server.start()
    settings.LLM_LIMITS_KEY_PREFIX = f"test-permits:{uuid.uuid4().hex}"
    yield server
    server.stop()


def _held(server: OwnRedis, configuration_id: int) -> int:
    key = limits.RedisLimits.keys(configuration_id)[0]
    return redis.Redis.from_url(server.url).zcard(key)


def test_waiters_that_leave_while_the_store_is_down_hold_no_permit_after_it_returns(
    own_redis, settings, caplog
):
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 30
    configuration = ModelConfigurationFactory(max_concurrency=2)

    async def scenario() -> tuple[float, int, int, int]:
        pool = PermitPool(configuration, RedisBlocks(own_redis.url))
        own_redis.stop()
        leaving = asyncio.ensure_future(pool.acquire())
        staying = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(1.0)  # both have asked the store in vain by now
        assert not staying.done(), "a request failed instead of waiting for the store"
        leaving.cancel()  # its conversation gave up meanwhile
        await asyncio.sleep(0.1)
        assert len(pool.waiters) == 1
        own_redis.start()  # empty
        returned = time.monotonic()
        member, _waited = await asyncio.wait_for(staying, 10)
        resumed = time.monotonic() - returned
        held_while_busy = _held(own_redis, configuration.pk)
        pool.release(member)
        await pool.maintain()
        held_after = _held(own_redis, configuration.pk)
        # The whole limit is free again: two requests get their permits at once.
        first, second = await asyncio.wait_for(asyncio.gather(pool.acquire(), pool.acquire()), 5)
        both = _held(own_redis, configuration.pk)
        pool.release(first[0])
        pool.release(second[0])
        await pool.maintain(final=True)
        await pool.blocks.client.aclose()
        return resumed, held_while_busy, held_after, both

    with caplog.at_level(logging.WARNING, logger="llm.permits"):
        resumed, held_while_busy, held_after, both = asyncio.run(scenario())
    assert resumed < 2, resumed
    assert (held_while_busy, held_after, both) == (1, 0, 2)
    said = [record.getMessage() for record in caplog.records]
    # Said once per outage, not at every retry.
    assert sum("did not answer" in line for line in said) == 1
    assert sum("answers again" in line for line in said) == 1


def test_a_waiter_out_of_time_while_the_store_is_down_leaves_the_queue(own_redis, settings):
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 1
    configuration = ModelConfigurationFactory(max_concurrency=1)

    async def scenario() -> int:
        pool = PermitPool(configuration, RedisBlocks(own_redis.url))
        own_redis.stop()
        with pytest.raises(LLMError) as raised:
            await pool.acquire()
        assert raised.value.retryable
        assert not pool.waiters
        own_redis.start()
        member, _waited = await asyncio.wait_for(pool.acquire(), 5)
        held = _held(own_redis, configuration.pk)
        pool.release(member)
        await pool.maintain(final=True)
        await pool.blocks.client.aclose()
        return held

    assert asyncio.run(scenario()) == 1


def test_handing_back_while_the_store_is_down_raises_nothing_and_is_tried_again(
    own_redis, settings
):
    configuration = ModelConfigurationFactory(max_concurrency=3)

    async def scenario() -> tuple[int, int, int]:
        pool = PermitPool(configuration, RedisBlocks(own_redis.url))
        taken = [(await pool.acquire())[0] for _ in range(2)]
        for member in taken:
            pool.release(member)
        own_redis.stop()
        await pool.maintain()  # the store is down: kept for the next tick, not lost or raised
        kept = len(pool._unreturned)
        own_redis.start()
        await pool.maintain()
        member, _waited = await asyncio.wait_for(pool.acquire(), 5)
        held = _held(own_redis, configuration.pk)
        pool.release(member)
        await pool.maintain(final=True)
        await pool.blocks.client.aclose()
        return kept, len(pool._unreturned), held

    assert asyncio.run(scenario()) == (2, 0, 1)


def test_permits_in_use_count_again_when_the_store_returns_empty(own_redis, settings):
    """Another process must not be granted the slots this one still uses."""
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 1
    configuration = ModelConfigurationFactory(max_concurrency=2)

    async def scenario() -> tuple[int, bool]:
        ours = PermitPool(configuration, RedisBlocks(own_redis.url))
        theirs = PermitPool(configuration, RedisBlocks(own_redis.url))
        held = [(await ours.acquire())[0] for _ in range(2)]
        own_redis.stop()
        ours._renewed = 0.0  # a renewal falls due during the outage
        await ours.maintain()
        own_redis.start()  # empty: it no longer knows the two permits in use
        await ours.maintain()
        counted = _held(own_redis, configuration.pk)
        try:
            await theirs.acquire()
        except LLMError:
            refused = True
        else:
            refused = False
        for member in held:
            ours.release(member)
        await ours.maintain(final=True)
        await theirs.maintain(final=True)
        await ours.blocks.client.aclose()
        await theirs.blocks.client.aclose()
        return counted, refused

    assert asyncio.run(scenario()) == (2, True)


def test_a_sync_call_waits_out_the_store_and_keeps_a_reply_whose_slot_it_cannot_return(
    own_redis, settings, fake_openai
):
    """The per-call limits (web, tasks) the same way: a store that is down is waited for, and
    one that goes down while the request is at the endpoint costs no reply."""
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 30
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_concurrency=1)
    limits.backend_set(limits.RedisLimits(own_redis.url))
    fake_openai.latency = 1.0
    asked = {
        "configuration": configuration,
        "messages": [{"role": "user", "content": "Hello"}],
        "role": "target",
        "purpose": "tests.permits",
        "use_cache": False,
    }
    try:
        # Down when the call asks for its slot, back 1 s later.
        own_redis.stop()
        threading.Timer(1.0, own_redis.start).start()
        started = time.monotonic()
        first = chat(**asked)
        waited = time.monotonic() - started
        # Down while the request is at the endpoint: its slot cannot be returned.
        threading.Timer(0.3, own_redis.stop).start()
        second = chat(**asked)
    finally:
        limits.backend_set(None)
    assert first.text
    assert second.text
    assert 1.0 <= waited < 4
    assert LLMCall.objects.filter(outcome=CallOutcome.SUCCESS).count() == 2
    assert fake_openai.request_count == 2
