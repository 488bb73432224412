"""A limits Redis that accepts connections and answers nothing costs a process one socket
timeout per outage window, not one per call; once it answers again, slots are taken within the
window. The store sits behind a freezable proxy in front of the real Redis."""

import threading
import time
from urllib.parse import urlparse

import pytest

from core.breaker import BreakerState, CircuitOpen
from llm import limits as limits_module
from llm.limits import RedisLimits
from tests.llm.factories import ModelConfigurationFactory
from tests.tcp_proxy import FreezableProxy

pytestmark = pytest.mark.django_db

SOCKET_TIMEOUT = 0.5
WINDOW = 1.0


@pytest.fixture
def proxied_limits(settings):
    redis_url = urlparse(settings.LLM_LIMITS_REDIS_URL or "redis://127.0.0.1:6379/0")
    if redis_url.scheme != "redis":
        pytest.skip("the limits store is not Redis here")
    proxy = FreezableProxy((redis_url.hostname, redis_url.port or 6379)).start()
    settings.LLM_LIMITS_SOCKET_TIMEOUT = SOCKET_TIMEOUT
    settings.LLM_LIMITS_OUTAGE_SKIP_SECONDS = WINDOW
    settings.LLM_LIMITS_KEY_PREFIX = f"test-breaker-{time.monotonic_ns()}"
    limits = RedisLimits(f"redis://127.0.0.1:{proxy.port}{redis_url.path or '/0'}")
    yield proxy, limits
    proxy.close()


def test_a_hanging_store_costs_one_timeout_per_window_and_is_used_again(proxied_limits):
    proxy, limits = proxied_limits
    configuration = ModelConfigurationFactory(max_concurrency=50)
    assert limits.try_acquire(configuration, "before") == 0.0
    proxy.freeze()
    outcomes = []
    started = time.monotonic()
    for i in range(20):
        try:
            limits.try_acquire(configuration, f"during-{i}")
        except limits.unreachable as error:
            outcomes.append(type(error))
    spent = time.monotonic() - started
    # Every call was refused, the first by its timeout, the others by the breaker at once.
    assert len(outcomes) == 20
    assert outcomes[0] is not CircuitOpen
    assert set(outcomes[1:]) == {CircuitOpen}
    assert spent < 2 * SOCKET_TIMEOUT, spent  # one timeout, not twenty (10 s)
    assert limits._breaker.state is BreakerState.OPEN
    # Releasing during the outage is refused at once too (the slot lapses by itself).
    with pytest.raises(CircuitOpen):
        limits.release(configuration.pk, "before")

    proxy.thaw()
    time.sleep(WINDOW + 0.1)
    # The probe finds the store answering again: slots are taken as before.
    assert limits.try_acquire(configuration, "after") == 0.0
    assert limits._breaker.state is BreakerState.CLOSED
    limits.release(configuration.pk, "after")
    limits.release(configuration.pk, "before")


def test_the_gateway_waits_out_an_outage_and_takes_its_slot_after(proxied_limits):
    """`acquire` through the breaker: calls made while the store hangs wait (no error raised
    to the caller) and get their slot once it answers."""
    proxy, limits = proxied_limits
    limits_module.backend_set(limits)
    try:
        configuration = ModelConfigurationFactory(max_concurrency=5)
        proxy.freeze()
        threading.Timer(1.5, proxy.thaw).start()
        started = time.monotonic()
        lease = limits_module.acquire(configuration)
        waited = time.monotonic() - started
        assert lease is not None
        assert 1.4 < waited < 1.5 + WINDOW + SOCKET_TIMEOUT + 1.0, waited
        limits_module.release(lease)
    finally:
        limits_module.backend_set(None)
