"""The page cache keys only on values it knows: a flood of distinct parameter values and
`Accept` headers is answered, and leaves the number of stored pages where it was."""

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from django.urls import reverse

from core.pagecache import page_representation
from tests.results.public_data import add_rubric_responses, published_run

pytestmark = pytest.mark.django_db

FLOOD = 60
PREFIX = "pagecache-flood"


@pytest.fixture
def redis_pages(settings):
    """The pages alias on the tests' Redis, under a prefix of its own, emptied around the test."""
    location = django_settings.CELERY_BROKER_URL.rsplit("/", 1)[0] + "/12"
    settings.CACHES = {
        **settings.CACHES,
        "pages": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            "KEY_PREFIX": PREFIX,
        },
    }
    cache = caches["pages"]
    _clear(cache)
    yield cache
    _clear(cache)


def _clear(cache) -> None:
    client = cache._cache.get_client()
    for key in client.keys(f"{PREFIX}:*"):
        client.delete(key)


def _stored(cache) -> int:
    # Counted by this test's prefix: other processes may share the Redis database.
    return len(cache._cache.get_client().keys(f"{PREFIX}:*"))


@pytest.mark.slow(reason="a flood of requests with distinct values and Accept headers")
def test_a_flood_of_unknown_values_and_accept_headers_stores_nothing(client, redis_pages):
    run = published_run()
    add_rubric_responses(run, n_items=2)
    target = run.targets.order_by("pk").first()
    metric_key = run.release.items.first().metric.key
    conversations = reverse("results-api:run-conversations", args=[run.pk])
    rubric_items = reverse("results:rubric-items")
    # Known values: each stored once.
    known = [
        (conversations, {"metric": metric_key}, {}),
        (conversations, {}, {"HTTP_ACCEPT": "application/json"}),
        (rubric_items, {"model": target.pk}, {}),
    ]
    for url, query, headers in known:
        assert client.get(url, query, **headers).status_code == 200
    baseline = _stored(redis_pages)
    assert baseline >= len(known)
    for n in range(FLOOD):
        flood = [
            (conversations, {"metric": f"x{n}"}, {}),
            (conversations, {}, {"HTTP_ACCEPT": f"application/json; v={n}"}),
            (rubric_items, {"model": 10_000 + n}, {}),
            (rubric_items, {"model": f"0{target.pk}"}, {}),  # the same id spelled anew
            (conversations, {"page": f"0{n + 1}"}, {}),
        ]
        for url, query, headers in flood:
            assert client.get(url, query, **headers).status_code < 500
    assert _stored(redis_pages) == baseline
    # Known values are still served from the cache.
    for url, query, headers in known:
        assert client.get(url, query, **headers).status_code == 200
    assert _stored(redis_pages) == baseline


@pytest.mark.parametrize(
    ("accept", "representation"),
    [
        ("", "json"),
        ("application/json", "json"),
        ("*/*", "json"),
        ("text/html,application/xhtml+xml,*/*;q=0.8", "json"),
        ("application/json; indent=4", None),
        ("application/json; v=7", None),
        ("text/csv", None),
    ],
)
def test_the_api_key_holds_one_representation(rf, accept, representation):
    request = rf.get("/api/areas/", HTTP_ACCEPT=accept)
    assert page_representation(request, "api.AreaListApi") == representation
    assert page_representation(request, "ExploreView") == ""
