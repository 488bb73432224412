"""The engine admits fewer requests at once while a provider refuses for its rate limit, and
as many as configured again once it stops (llm.admission): against a server that accepts
three requests at a time and answers 429 to the rest, though eight are configured."""

import asyncio
import uuid

import pytest

from llm import limits
from llm.admission import AdmissionGate
from llm.aio import AsyncGateway
from tests.fake_openai import Behaviour
from tests.llm.factories import ModelConfigurationFactory
from tests.llm.test_token_limits import _Calls, _redis_limits, engine_calls_drive

pytestmark = pytest.mark.embedded

SERVER_LIMIT = 3
CONFIGURED = 8


def _phases(fake_openai, settings, *, adaptive: bool) -> tuple[int, int, int]:
    """(429s while the server is strict, its peak in flight then, peak in flight once it stops
    refusing: 60 calls, then 200), through one gateway, as one worker process keeps it."""
    settings.LLM_ADAPTIVE_CONCURRENCY = adaptive
    settings.LLM_MAX_RETRIES = 20
    settings.LLM_LIMITS_KEY_PREFIX = f"test-adaptive:{uuid.uuid4().hex}"
    limits.backend_set(_redis_limits(settings))
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url, max_concurrency=CONFIGURED
    )
    fake_openai.latency = 0.03
    strict = {"on": True}

    def reply(request):
        if strict["on"] and fake_openai.in_flight > SERVER_LIMIT:
            return Behaviour(status=429, headers={"Retry-After": "0"})
        return Behaviour()

    fake_openai.responder = reply
    sink = _Calls()

    async def scenario() -> tuple[int, int, int]:
        gateway = AsyncGateway(concurrency=64)
        try:
            strict_texts = [f"strict {i}" for i in range(60)]
            await engine_calls_drive(gateway, configuration, strict_texts, sink)
            refused = sum(1 for call in sink.calls if call.outcome == "rate_limited")
            peak_strict = fake_openai.max_in_flight
            strict["on"] = False
            fake_openai.max_in_flight = 0
            free_texts = [f"free {i}" for i in range(200)]
            await engine_calls_drive(gateway, configuration, free_texts, sink)
            return refused, peak_strict, fake_openai.max_in_flight
        finally:
            await gateway.close()

    try:
        return asyncio.run(scenario())
    finally:
        limits.backend_set(None)


@pytest.mark.slow(reason="two phases of 260 calls each, with and without adaptation")
@pytest.mark.django_db(transaction=True)
def test_refusals_for_rate_shrink_what_is_sent_at_once_and_it_grows_back(fake_openai, settings):
    fixed = _phases(fake_openai, settings, adaptive=False)
    fake_openai.reset()
    adaptive = _phases(fake_openai, settings, adaptive=True)
    refused_fixed, _peak, free_fixed = fixed
    refused_adaptive, _peak, free_adaptive = adaptive
    # Sending eight at a time to a server that takes three meets refusals on every wave;
    # halving on each 429 settles near the server's limit. Without adaptation both runs are
    # the same (ratio ~1). Measured: fixed 121-195 refusals, adaptive 16-20 on a quiet machine;
    # under a full suite beside other work the fixed client spreads its eight out itself and
    # met 53 against 18, so the margin asked is 2x, not the quiet machine's 6-10x.
    assert refused_adaptive * 2 <= refused_fixed, (fixed, adaptive)
    # Once the server stops refusing, answers raise the ceiling back to what was configured.
    assert free_fixed == CONFIGURED
    assert free_adaptive == CONFIGURED


def test_the_gate_halves_on_a_refusal_and_climbs_one_per_round_of_answers(settings):
    settings.LLM_ADAPTIVE_CONCURRENCY = True
    gate = AdmissionGate(8)
    gate.backoff()
    assert gate.ceiling == 4
    gate.backoff()
    gate.backoff()
    gate.backoff()
    assert gate.ceiling == 1  # never below one
    climbed = []
    for _ in range(1 + 2 + 3 + 4 + 5 + 6 + 7 + 5):
        gate.succeeded()
        climbed.append(gate.ceiling)
    # One more after each round of as many answers as are admitted, up to the limit.
    assert climbed[0] == 2
    assert climbed[2] == 3
    assert climbed[27] == 8
    assert max(climbed) == 8


def test_a_waiter_admitted_as_it_gives_up_passes_its_slot_on(settings):
    async def scenario() -> int:
        gate = AdmissionGate(1)
        await gate.acquire()
        waiting = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        gate.release()  # admits the waiter ...
        waiting.cancel()  # ... which gives up in the same turn of the loop
        await asyncio.sleep(0)
        await asyncio.wait_for(gate.acquire(), 1)  # the slot was passed on, not lost
        return gate.active

    assert asyncio.run(scenario()) == 1
