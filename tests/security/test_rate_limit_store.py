"""Lockouts hold whatever else the site is asked: rate-limit state lives where nothing culls it,
on the embedded default (a database table) and on Redis, and the page cache keys on the
parameters a page reads, so unknown ones neither add entries nor skip the cache."""

import uuid

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.cache import caches
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse

from core.roles import Role
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

PASSWORD = "correct-horse-battery"
EMAIL = "m@example.org"
REQUESTS = 1_000
REDIS_URL = "redis://127.0.0.1:6379"


def _lock(client) -> None:
    for _ in range(5):
        client.post(reverse("account_login"), {"login": EMAIL, "password": "wrong-password"})


def _flood(client, url: str) -> None:
    """Anonymous GETs, each with a query string never seen before."""
    for i in range(REQUESTS):
        response = client.get(url, {f"x{i}": uuid.uuid4().hex, "utm": str(i)})
        assert response.status_code == 200


def _signs_in(client) -> bool:
    client.post(reverse("account_login"), {"login": EMAIL, "password": PASSWORD})
    return SESSION_KEY in client.session


@pytest.fixture
def account():
    return UserFactory(email=EMAIL, username=EMAIL, roles=[Role.MAINTAINER])


def _rows(table: str, like: str = "%") -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM {table} WHERE cache_key LIKE %s",  # noqa: S608 - a fixed table
            [like],
        )
        return cursor.fetchone()[0]


@pytest.mark.slow(reason="a flood of requests against the lockout")
def test_the_embedded_default_keeps_the_lockout_through_a_flood_of_unique_queries(account):
    run = published_run()
    database_caches = {
        "default": settings.CACHES["database"],
        "pages": settings.CACHES["database_pages"],  # MAX_ENTRIES=300: culled like production
    }
    with override_settings(CACHES=database_caches):
        try:
            client = Client()
            _lock(client)
            counters = _rows("django_cache")
            assert counters > 0
            _flood(Client(), reverse("results:explore") + f"?run={run.pk}")
            # One page, one page entry: the unknown parameters were not part of any key (the
            # page's own data, such as judge trust, adds a fixed entry, not one per query).
            assert _rows("django_page_cache", "%:page:%") == 1
            assert _rows("django_page_cache") <= 2
            assert _rows("django_cache") == counters
            assert not _signs_in(client)
        finally:
            caches["default"].clear()
            caches["pages"].clear()


def test_the_rate_limit_table_is_swept_of_expired_rows_only(account):
    store = caches["database"]
    assert store._max_entries == 10_000
    store._max_entries = 10
    try:
        store.set("allauth:rl:first", [1.0], 300)
        for i in range(200):
            store.set(f"page-like-{i}", i, 300)
        store.set("expired", 1, -1)
        store.set("trigger", 1, 300)
        assert store.get("allauth:rl:first") == [1.0]
        assert store.get("page-like-0") == 0
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM django_cache WHERE cache_key LIKE %s", ["%expired"]
            )
            assert cursor.fetchone()[0] == 0
    finally:
        store._max_entries = 10_000
        store.clear()


def test_django_culls_the_page_cache_table_as_configured():
    """The page cache stays bounded (what the rate-limit table must never do)."""
    pages = caches["database_pages"]
    try:
        for i in range(400):
            pages.set(f"page:{i}", i, 300)
        assert _rows("django_page_cache") <= 300
    finally:
        pages.clear()


@pytest.fixture
def redis_caches():
    """The rate-limit store on one Redis database and the page cache on another."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    config = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"{REDIS_URL}/3",
            "KEY_PREFIX": prefix,
        },
        "pages": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"{REDIS_URL}/4",
            "KEY_PREFIX": f"{prefix}-pages",
        },
    }
    with override_settings(CACHES=config):
        try:
            yield prefix
        finally:
            for alias in ("default", "pages"):
                client = caches[alias]._cache.get_client(write=True)
                keys = list(client.scan_iter(f"{config[alias]['KEY_PREFIX']}:*"))
                if keys:
                    client.delete(*keys)


@pytest.mark.slow(reason="a flood of requests against the lockout")
def test_redis_keeps_the_lockout_through_a_flood_of_unique_queries(account, redis_caches):
    run = published_run()
    client = Client()
    _lock(client)
    rate_limits = caches["default"]._cache.get_client()
    counters = list(rate_limits.scan_iter(f"{redis_caches}:*allauth:rl:*"))
    assert counters
    _flood(Client(), reverse("results:explore") + f"?run={run.pk}")
    pages = caches["pages"]._cache.get_client()
    assert len(list(pages.scan_iter(f"{redis_caches}-pages:*:page:*"))) == 1
    assert len(list(pages.scan_iter(f"{redis_caches}-pages:*"))) <= 2
    assert sorted(rate_limits.scan_iter(f"{redis_caches}:*allauth:rl:*")) == sorted(counters)
    assert not _signs_in(client)


def test_an_unknown_parameter_is_served_from_the_cache(client, django_assert_max_num_queries):
    run = published_run()
    url = reverse("results:explore") + f"?run={run.pk}"
    first = client.get(url)
    with django_assert_max_num_queries(1):  # the data stamp; the page comes from the cache
        again = client.get(url + "&utm_source=anything&x=1")
    assert again.content == first.content
    assert again["ETag"] == first["ETag"]


def test_a_known_parameter_still_makes_its_own_page(client):
    run = published_run()
    url = reverse("results:explore") + f"?run={run.pk}"
    adult = client.get(url + "&age=adult")
    teen = client.get(url + "&age=teen")
    assert adult["ETag"] != teen["ETag"]


@override_settings(ALLOWED_HOSTS=["a.example", "b.example"])
def test_the_host_and_scheme_are_part_of_the_key(client):
    run = published_run()
    url = reverse("results:explore") + f"?run={run.pk}"
    first = client.get(url, HTTP_HOST="a.example")
    assert first.status_code == 200
    other_host = client.get(url, HTTP_HOST="b.example")
    secure = client.get(url, HTTP_HOST="a.example", secure=True)
    assert len({first["ETag"], other_host["ETag"], secure["ETag"]}) == 3


def test_a_cached_answer_carries_no_unknown_parameter_in_its_links(client):
    run = published_run(n_metrics=5)  # 60 conversations: more than a page of 50
    url = reverse("results-api:run-conversations", args=[run.pk])
    poisoned = client.get(url, {"utm_evil": "https://evil.example/"}).json()
    assert poisoned["next"]
    assert "evil" not in poisoned["next"]
    clean = client.get(url).json()
    assert clean == poisoned
