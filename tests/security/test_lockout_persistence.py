"""An account's lockout is kept in the database: a cache Redis restarted empty (no persistence)
unlocks nobody, and the lockout ends with its window, not with the cache."""

import shutil
from datetime import timedelta

import pytest
import redis
from django.contrib.auth import SESSION_KEY
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from core.models import SignInAttempt
from core.roles import Role
from core.services import sign_in_attempt_begin, sign_in_attempt_forget, sign_in_attempts_clear
from impactbench_site.settings.base import cache_config
from tests.factories import UserFactory
from tests.own_redis import OwnRedis, free_port

pytestmark = pytest.mark.django_db

EMAIL = "m@example.org"
PASSWORD = "correct-horse-battery"
PORT = free_port()


def _sign_in(client: Client, password: str):
    return client.post(reverse("account_login"), {"login": EMAIL, "password": password})


def _signs_in(password: str = PASSWORD) -> bool:
    client = Client()
    _sign_in(client, password)
    return SESSION_KEY in client.session


@pytest.fixture
def account():
    return UserFactory(email=EMAIL, username=EMAIL, roles=[Role.MAINTAINER])


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_lockout_survives_the_cache_restarting_empty(account, tmp_path):
    store = OwnRedis(tmp_path, PORT)
    store.start()
    caches = {
        "default": cache_config(store.url, key_prefix="rl", max_entries=0, never_cull=True),
        "pages": cache_config(store.url, key_prefix="pages", max_entries=0, never_cull=False),
    }
    try:
        with override_settings(CACHES=caches):
            client = Client()
            for _ in range(5):
                assert _sign_in(client, "wrong-password").status_code == 200
            assert SignInAttempt.objects.count() == 5
            locked = _sign_in(Client(), PASSWORD)
            assert "Too many failed login attempts" in locked.content.decode()
            assert SESSION_KEY not in client.session

            store.stop()
            store.start()  # no persistence: every counter in the cache is gone
            assert redis.Redis.from_url(store.url).dbsize() == 0
            assert not _signs_in()
            assert not _signs_in()  # a refused attempt does not count, nor unlock

            SignInAttempt.objects.update(attempted_at=timezone.now() - timedelta(seconds=301))
            assert _signs_in()  # the window has passed
    finally:
        store.stop()


def test_the_sixth_attempt_within_the_window_is_refused(settings):
    attempts = [sign_in_attempt_begin(login=" M@Example.org") for _ in range(5)]
    assert all(attempts)
    assert sign_in_attempt_begin(login="m@example.org") is None
    assert sign_in_attempt_begin(login="other@example.org") is not None
    assert SignInAttempt.objects.count() == 6  # the refused one left no row


def test_a_right_password_forgets_its_own_attempt_only():
    for _ in range(4):
        sign_in_attempt_begin(login=EMAIL)
    right = sign_in_attempt_begin(login=EMAIL)
    sign_in_attempt_forget(attempt=right)
    assert SignInAttempt.objects.count() == 4
    assert sign_in_attempt_begin(login=EMAIL) is not None
    assert sign_in_attempt_begin(login=EMAIL) is None


def test_attempts_older_than_the_window_neither_count_nor_stay():
    for _ in range(5):
        sign_in_attempt_begin(login=EMAIL)
    SignInAttempt.objects.update(attempted_at=timezone.now() - timedelta(seconds=301))
    assert sign_in_attempt_begin(login=EMAIL) is not None
    assert SignInAttempt.objects.count() == 1


def test_a_password_reset_clears_the_account_s_attempts():
    for _ in range(5):
        sign_in_attempt_begin(login=EMAIL)
    sign_in_attempts_clear(login=EMAIL.upper())
    assert not SignInAttempt.objects.exists()


def test_the_stored_key_is_not_the_address():
    sign_in_attempt_begin(login=EMAIL)
    assert EMAIL not in SignInAttempt.objects.get().account_key
