"""A killed worker's request permits come back within the permit lease (LLM_PERMIT_LEASE_SECONDS),
not after the 90 s a single call's lease lasts; a live process keeps its permits past that lease
by renewing them. (Measured by benchmarks/kill_campaign.py: with every worker killed, a run made
no call for 96 s, its 24 slots held by dead pools.)"""

import asyncio
import time
import uuid

import pytest

from llm.exceptions import LLMError
from llm.permits import PermitPool, RedisBlocks
from tests.llm.factories import ModelConfigurationFactory
from tests.llm.test_token_limits import _redis_limits

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

LEASE = 1.0


@pytest.fixture
def redis_url(settings):
    settings.LLM_LIMITS_KEY_PREFIX = f"test-permit-lease:{uuid.uuid4().hex}"
    settings.LLM_PERMIT_LEASE_SECONDS = LEASE
    return _redis_limits(settings).url


@pytest.mark.slow(reason="waits for a permit lease of 1 s to lapse")
def test_a_dead_processs_permits_come_back_within_the_permit_lease(redis_url, settings):
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 10
    configuration = ModelConfigurationFactory(max_concurrency=2)

    async def scenario() -> float:
        dead = PermitPool(configuration, RedisBlocks(redis_url))
        live = PermitPool(configuration, RedisBlocks(redis_url))
        for _ in range(2):
            await dead.acquire()  # then killed: never renewed, never handed back
        started = time.monotonic()
        member, _waited = await live.acquire()
        took = time.monotonic() - started
        live.release(member)
        await live.maintain(final=True)
        await dead.blocks.client.aclose()
        await live.blocks.client.aclose()
        return took

    took = asyncio.run(scenario())
    assert LEASE * 0.5 < took < LEASE + 1.5


@pytest.mark.slow(reason="holds permits for 2.5 s, past their lease of 1 s")
def test_a_live_process_keeps_its_permits_past_the_lease_by_renewing_them(redis_url, settings):
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 2.0
    configuration = ModelConfigurationFactory(max_concurrency=2)

    async def scenario() -> bool:
        holder = PermitPool(configuration, RedisBlocks(redis_url))
        other = PermitPool(configuration, RedisBlocks(redis_url))
        held = [(await holder.acquire())[0] for _ in range(2)]

        async def keep() -> None:  # the engine's maintenance, every 0.1 s
            for _ in range(25):
                await holder.maintain()
                await asyncio.sleep(0.1)

        async def ask() -> bool:
            try:
                await other.acquire()
            except LLMError:
                return True
            return False

        refused, _ = await asyncio.gather(ask(), keep())
        for member in held:
            holder.release(member)
        await holder.maintain(final=True)
        await other.maintain(final=True)
        await holder.blocks.client.aclose()
        await other.blocks.client.aclose()
        return refused

    assert asyncio.run(scenario()) is True
