"""The ports tests start their servers on, and the test Redis's start-up check."""

import shutil
import socket

import pytest

from tests.own_redis import OwnRedis
from tests.ports import _ephemeral_range, free_port


def test_a_free_port_is_below_the_ephemeral_range_and_can_be_bound():
    low, high = _ephemeral_range()
    assert 1024 < low <= high
    ports = {free_port() for _ in range(20)}
    assert all(10_000 <= port < low for port in ports)
    assert len(ports) > 1  # drawn, not one fixed port every module would share
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", ports.pop()))


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_test_redis_on_a_taken_port_fails_at_once_with_the_reason(tmp_path):
    # Something that accepts connections but is no Redis: a TCP connect alone would take it
    # for a started server.
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", free_port()))
        squatter.listen()
        store = OwnRedis(tmp_path, squatter.getsockname()[1])
        with pytest.raises(AssertionError, match="taken"):
            store.start()
        store.stop()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_test_redis_is_started_once_it_answers_ping(tmp_path):
    import redis

    store = OwnRedis(tmp_path, free_port())
    store.start()
    try:
        assert redis.Redis.from_url(store.url).ping()
    finally:
        store.stop()
