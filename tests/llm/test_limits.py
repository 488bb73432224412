"""Shared concurrency and rate limits: never more requests in flight than max_concurrency."""

import threading
import uuid

import pytest
from django.db import connection

from core.exceptions import ApplicationError
from llm import limits
from llm.gateway import chat
from llm.models import LLMCall, RequestLease
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.embedded


def _redis_limits() -> limits.RedisLimits:
    redis = pytest.importorskip("redis")
    url = "redis://127.0.0.1:6379/7"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=0.5).ping()
    except redis.exceptions.RedisError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return limits.RedisLimits(url)


@pytest.fixture(params=["database", "redis"])
def limits_backend(request, settings):
    # A fresh key prefix per test, so leases of an earlier (or parallel) run never count.
    settings.LLM_LIMITS_KEY_PREFIX = f"test-limits:{uuid.uuid4().hex}"
    chosen = limits.DatabaseLimits() if request.param == "database" else _redis_limits()
    limits.backend_set(chosen)
    yield chosen
    limits.backend_set(None)


def _calls_from_threads(configuration, *, threads: int, calls: int) -> list[Exception]:
    errors: list[Exception] = []

    def work(worker: int) -> None:
        try:
            for index in range(calls):
                chat(
                    configuration=configuration,
                    messages=[{"role": "user", "content": f"hello {worker}-{index}"}],
                    role="target",
                    purpose="tests.limits",
                    use_cache=False,
                )
        except Exception as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
        finally:
            connection.close()

    pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


@pytest.mark.django_db(transaction=True)
def test_concurrency_never_exceeds_the_limit_across_threads(fake_openai, limits_backend):
    fake_openai.latency = 0.08
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_concurrency=3)
    assert _calls_from_threads(configuration, threads=10, calls=2) == []
    assert len(fake_openai.spans) == 20
    # Counted from the server's own start and end times: at most 3 overlap at any instant.
    events = sorted(
        [(start, 1) for start, _ in fake_openai.spans]
        + [(end, -1) for _, end in fake_openai.spans],
        key=lambda event: (event[0], event[1]),
    )
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    assert peak <= 3
    assert fake_openai.max_in_flight <= 3
    assert peak == 3  # the limit is used, not just respected
    waits = list(LLMCall.objects.values_list("limit_wait_ms", flat=True))
    assert max(waits) > 0  # waiting is recorded on the calls that waited


@pytest.mark.django_db(transaction=True)
def test_the_rate_limit_holds_and_a_bounded_wait_gives_up_retryably(
    fake_openai, limits_backend, settings
):
    settings.LLM_LIMIT_MAX_WAIT_SECONDS = 0.5
    settings.LLM_MAX_RETRIES = 0
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, requests_per_minute=4)
    assert _calls_from_threads(configuration, threads=2, calls=2) == []
    with pytest.raises(ApplicationError, match="Waited .* for a request slot"):
        chat(
            configuration=configuration,
            messages=[{"role": "user", "content": "one too many"}],
            role="target",
            purpose="tests.limits",
            use_cache=False,
        )
    assert fake_openai.request_count == 4
    assert LLMCall.objects.filter(outcome="rate_limited").count() == 1


@pytest.mark.django_db
def test_configurations_without_limits_take_no_lease(fake_openai):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    chat(
        configuration=configuration,
        messages=[{"role": "user", "content": "hi"}],
        role="target",
        purpose="tests.limits",
    )
    assert limits.acquire(configuration) is None
    assert not RequestLease.objects.exists()


@pytest.mark.django_db
def test_an_unreturned_database_lease_stops_counting_once_expired(settings):
    settings.LLM_TIMEOUT_SECONDS = -30.0  # leases expire the moment they are taken
    configuration = ModelConfigurationFactory(max_concurrency=1)
    backend = limits.DatabaseLimits()
    assert backend.try_acquire(configuration, "a" * 32) == 0
    # The first lease was never released (a killed worker), yet the slot is free again.
    assert backend.try_acquire(configuration, "b" * 32) == 0
