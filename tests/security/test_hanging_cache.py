"""A cache Redis that accepts connections and never answers costs a page at most one socket
timeout per outage window, not one per cache operation; sign-in still fails closed, at once;
and the cache is used again once it answers."""

import os
import shutil
import signal
import socket
import threading
import time

import pytest
from django.contrib.auth import SESSION_KEY
from django.core.cache import caches
from django.test import Client, override_settings
from django.urls import reverse

from core.breaker import BreakerState
from core.caches import cache_breaker, page_cache_get, page_cache_set
from core.roles import Role
from core.services import worker_heartbeat_record
from impactbench_site.settings.base import cache_config
from tests.factories import UserFactory
from tests.own_redis import OwnRedis, free_port
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db

SOCKET_TIMEOUT = 1.0  # what cache_config gives a Redis cache
# Under a second: two timeouts (2 s) can never pass for one, and a loaded machine has room.
SLACK = 0.9
PORT = free_port()


def _caches(url: str, *, skip_seconds: float = 30.0) -> dict:
    config = {
        "default": cache_config(url, key_prefix="rl", max_entries=0, never_cull=True),
        "pages": cache_config(url, key_prefix="pages", max_entries=1000, never_cull=False),
    }
    for alias in config.values():
        assert alias["OPTIONS"]["socket_timeout"] == SOCKET_TIMEOUT
        alias["OPTIONS"]["outage_skip_seconds"] = skip_seconds
    return config


@pytest.fixture
def silent_redis():
    """The URL of a server that accepts every connection and never sends a byte."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    listener.settimeout(0.1)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        listener.close()
    assert accepted, "the cache never connected to the silent server"


def _timed(action) -> float:
    started = time.monotonic()
    action()
    return time.monotonic() - started


def test_twenty_cache_operations_pay_one_timeout(silent_redis):
    with override_settings(CACHES=_caches(silent_redis)):
        found = []
        took = _timed(lambda: found.extend(page_cache_get(f"profile:{i}") for i in range(20)))
    assert found == [None] * 20
    assert SOCKET_TIMEOUT <= took <= SOCKET_TIMEOUT + SLACK, took


@pytest.mark.slow(reason="renders the label overview three times and waits out a timeout")
def test_two_page_loads_pay_one_timeout_between_them(silent_redis):
    published_run()
    url = reverse("results:label-overview")
    Client().get(url)  # imports and first-use costs, outside the measure
    refused = socket.create_server(("127.0.0.1", 0))
    refused_url = f"redis://127.0.0.1:{refused.getsockname()[1]}/0"
    refused.close()  # nothing listens there now: every connection is refused at once
    with override_settings(CACHES=_caches(refused_url)):
        uncached = _timed(lambda: Client().get(url))  # rendered without any cache, no wait
    with override_settings(CACHES=_caches(silent_redis)):
        responses = []
        took = _timed(lambda: responses.extend(Client().get(url) for _ in range(2)))
    assert [r.status_code for r in responses] == [200, 200]
    assert took <= 2 * uncached + SOCKET_TIMEOUT + SLACK, (took, uncached)


def test_sign_in_fails_closed_at_once_while_the_cache_hangs(silent_redis):
    UserFactory(email="m@example.org", username="m@example.org", roles=[Role.MAINTAINER])
    with override_settings(CACHES=_caches(silent_redis)):
        client = Client()
        responses = []

        def sign_in_three_times() -> None:
            for _ in range(3):
                responses.append(
                    client.post(
                        reverse("account_login"),
                        {"login": "m@example.org", "password": "correct-horse-battery"},
                    )
                )

        took = _timed(sign_in_three_times)
        assert [r.status_code for r in responses] == [503, 503, 503]
        assert SESSION_KEY not in client.session
    assert took <= SOCKET_TIMEOUT + SLACK, took


@pytest.mark.slow(reason="waits out a socket timeout and an outage window")
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_the_cache_is_used_again_once_it_answers(tmp_path):
    """A real Redis stopped (SIGSTOP: the kernel still accepts connections) and resumed."""
    redis = OwnRedis(tmp_path, PORT)
    redis.start()
    try:
        with override_settings(CACHES=_caches(redis.url, skip_seconds=1.0)):
            page_cache_set("kept", "value", 300)
            breaker = caches["pages"]._cache.breaker
            os.kill(redis.process.pid, signal.SIGSTOP)
            try:
                took = _timed(lambda: [page_cache_get("kept") for _ in range(20)])
                assert took <= SOCKET_TIMEOUT + SLACK, took
                assert breaker.state is BreakerState.OPEN
            finally:
                os.kill(redis.process.pid, signal.SIGCONT)
            time.sleep(1.0)  # the window passes; the next operation probes
            assert page_cache_get("kept") == "value"
            assert breaker.state is BreakerState.CLOSED
            # Both aliases are one server, so one breaker: the rate-limit store is back too.
            assert caches["default"]._cache.breaker is breaker
            assert cache_breaker([f"redis://127.0.0.1:{PORT}/1"], open_seconds=1) is breaker
            assert caches["default"].add("counter", 1, 60)
    finally:
        redis.stop()


def test_readiness_names_the_hanging_cache_and_then_that_it_is_skipped(silent_redis):
    worker_heartbeat_record()
    with override_settings(CACHES=_caches(silent_redis)):
        first = Client().get(reverse("core:ready"))
        assert first.status_code == 503
        assert first.json()["failing"] == ["cache"]
        deadline = time.monotonic() + SOCKET_TIMEOUT + SLACK
        while time.monotonic() < deadline:  # the prober's one timeout runs out
            detail = Client().get(reverse("core:ready")).json()["checks"]["cache"]["detail"]
            if "skipped" in detail:
                break
            time.sleep(0.1)
        assert "is skipped for" in detail, detail
        assert "TimeoutError" in detail, detail
