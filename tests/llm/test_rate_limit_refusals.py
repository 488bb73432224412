"""A 429 with Retry-After holds the whole configuration, in every worker, not only the request
that met it: the synchronous gateway and the batch engine, on the database and Redis stores."""

import threading
import time
import uuid

import pytest
from django.db import connections

from llm import limits
from llm.models import LLMCall
from tests.llm.factories import ModelConfigurationFactory
from tests.llm.test_token_limits import _ask, _engine_calls, _redis_limits

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.slow(reason="requests wait out a Retry-After of 1 s"),
]

RETRY_AFTER = 1.0


def _ask_in_thread(configuration, text: str) -> threading.Thread:
    """`_ask` from another thread, as another worker would (its own database connection)."""

    def ask() -> None:
        try:
            _ask(configuration, text)
        finally:
            connections.close_all()

    thread = threading.Thread(target=ask)
    thread.start()
    return thread


@pytest.fixture(params=["database", "redis"])
def store(request, settings):
    settings.LLM_LIMITS_KEY_PREFIX = f"test-refusals:{uuid.uuid4().hex}"
    settings.LLM_BACKOFF_MAX_SECONDS = 5.0  # the server's Retry-After is honoured whole
    chosen = limits.DatabaseLimits() if request.param == "database" else _redis_limits(settings)
    limits.backend_set(chosen)
    yield chosen
    limits.backend_set(None)


@pytest.mark.django_db(transaction=True)
def test_a_refusal_for_the_rate_limit_holds_the_other_callers_too(fake_openai, store):
    """Caller A meets a 429 (Retry-After 1 s); caller B, in another thread (as another worker
    would), asks a moment later: B's request leaves only after the second A was told to wait."""
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url, requests_per_minute=1000
    )
    fake_openai.enqueue(status=429, headers={"Retry-After": f"{RETRY_AFTER:g}"})
    first = _ask_in_thread(configuration, "A")
    deadline = time.monotonic() + 10
    while fake_openai.request_count < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    refused_at = fake_openai.spans[0][1]
    time.sleep(0.1)  # A has read the refusal and paused the configuration
    _ask(configuration, "B")
    first.join(timeout=10)

    assert fake_openai.request_count == 3  # A refused, then A and B once each
    later = sorted(start for start, _end in fake_openai.spans[1:])
    assert later[0] - refused_at >= RETRY_AFTER - 0.1
    outcomes = sorted(LLMCall.objects.values_list("outcome", flat=True))
    assert outcomes == ["rate_limited", "success", "success"]


@pytest.mark.django_db(transaction=True)
def test_without_limits_only_the_refused_request_waits(fake_openai, store):
    """A configuration with no limits takes no slot, so nothing reads a pause: the refusal
    delays its own request and B goes at once (said in `limits.pace_refused`)."""
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.enqueue(status=429, headers={"Retry-After": f"{RETRY_AFTER:g}"})
    first = _ask_in_thread(configuration, "A")
    deadline = time.monotonic() + 10
    while fake_openai.request_count < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    refused_at = fake_openai.spans[0][1]
    _ask(configuration, "B")
    first.join(timeout=10)
    starts = sorted(start for start, _end in fake_openai.spans[1:])
    assert starts[0] - refused_at < RETRY_AFTER - 0.2
    assert starts[1] - refused_at >= RETRY_AFTER - 0.1


@pytest.mark.django_db(transaction=True)
def test_the_engine_holds_its_permits_after_a_refusal(fake_openai, settings):
    """The batch engine: three calls through one slot, the first refused with Retry-After
    1 s; the slot it gives back is not used within that second."""
    settings.LLM_LIMITS_KEY_PREFIX = f"test-refusals:{uuid.uuid4().hex}"
    settings.LLM_BACKOFF_MAX_SECONDS = 5.0
    limits.backend_set(_redis_limits(settings))
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_concurrency=1)
    fake_openai.latency = 0.05
    fake_openai.enqueue(status=429, headers={"Retry-After": f"{RETRY_AFTER:g}"})
    try:
        calls = _engine_calls(configuration, ["first", "second", "third"])
    finally:
        limits.backend_set(None)
    assert sorted(call.outcome for call in calls) == ["rate_limited"] + ["success"] * 3
    refused_at = min(end for _start, end in fake_openai.spans)
    late = [start for start, _end in fake_openai.spans if start > refused_at]
    assert late
    assert min(late) - refused_at >= RETRY_AFTER - 0.1
