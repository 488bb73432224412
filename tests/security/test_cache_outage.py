"""With Redis as the cache and Redis down, public pages render uncached, reading goes on, and
sign-in is refused with a reason (a lockout that cannot be counted is not skipped)."""

import logging
import shutil
import socket
import subprocess
import time

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from core.roles import Role
from impactbench_site.settings.base import cache_config
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


def _free_port() -> int:
    """A port no one listens on: each test's Redis has its own, so two tests of this module
    running at once (on two test processes) never share, and stop, one server."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = _free_port()
PASSWORD = "correct-horse-battery"


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture
def own_redis():
    """A Redis of this test's own, which the test may stop (never a shared one)."""
    process = subprocess.Popen(  # noqa: S603 - fixed arguments
        ["redis-server", "--port", str(PORT), "--save", "", "--appendonly", "no"],  # noqa: S607
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not _answers(PORT):
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    url = f"redis://127.0.0.1:{PORT}/0"
    caches = {
        "default": cache_config(url, key_prefix="rl", max_entries=0, never_cull=True),
        "pages": cache_config(url, key_prefix="pages", max_entries=0, never_cull=False),
    }
    try:
        with override_settings(CACHES=caches):
            yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def _stop(process) -> None:
    process.terminate()
    process.wait(timeout=10)
    assert not _answers(PORT)


def test_public_pages_render_uncached_while_the_cache_is_down(own_redis, caplog):
    run = published_run()
    url = reverse("results:explore") + f"?run={run.pk}"
    cached = Client().get(url)
    assert cached.status_code == 200
    _stop(own_redis)
    with caplog.at_level(logging.WARNING, logger="core.caches"):
        started = time.monotonic()
        for _ in range(3):
            response = Client().get(url)
            assert response.status_code == 200
            assert response.content == cached.content
        assert time.monotonic() - started < 10
    # Said once, when the cache's breaker opened (core.breaker), not once per operation.
    assert caplog.text.count(f"Cache 127.0.0.1:{PORT} unavailable") == 1, caplog.text
    api = Client().get(reverse("results-api:explore"), {"run": run.pk})
    assert api.status_code == 200


def test_sign_in_fails_closed_and_reading_stays_open_while_the_cache_is_down(own_redis):
    UserFactory(email="m@example.org", username="m@example.org", roles=[Role.MAINTAINER])
    _stop(own_redis)
    client = Client()
    assert client.get(reverse("account_login")).status_code == 200
    response = client.post(
        reverse("account_login"), {"login": "m@example.org", "password": PASSWORD}
    )
    assert response.status_code == 503
    assert "paused" in response.content.decode()
    assert response["Retry-After"] == "60"
    assert SESSION_KEY not in client.session
    signup = client.post(
        reverse("account_signup"),
        {"email": "new@example.org", "password1": "A-long-pass-1", "password2": "A-long-pass-1"},
    )
    assert signup.status_code == 503
    assert not get_user_model().objects.filter(email="new@example.org").exists()
