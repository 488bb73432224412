"""Liveness and readiness endpoints: database, broker and a worker's heartbeat."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.models import WorkerPing
from core.services import worker_heartbeat_record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_ready_only_with_a_recent_worker_heartbeat(client, settings):
    settings.HEALTH_WORKER_MAX_AGE_SECONDS = 60
    response = client.get(reverse("core:ready"))
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"]["ok"]
    assert checks["broker"]["ok"]
    assert not checks["worker"]["ok"]

    worker_heartbeat_record()
    response = client.get(reverse("core:ready"))
    assert response.status_code == 200
    assert response.json()["status"] == "ready"

    WorkerPing.objects.update(answered_at=timezone.now() - timedelta(seconds=61))
    response = client.get(reverse("core:ready"))
    assert response.status_code == 503
    assert "limit 60 s" in response.json()["checks"]["worker"]["detail"]


def test_not_ready_when_the_broker_is_unreachable(client, settings):
    worker_heartbeat_record()
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    response = client.get(reverse("core:ready"))
    assert response.status_code == 503
    assert not response.json()["checks"]["broker"]["ok"]


def test_heartbeats_older_than_a_day_are_pruned():
    WorkerPing.objects.create(
        token="old",
        requested_at=timezone.now() - timedelta(days=2),
        answered_at=timezone.now() - timedelta(days=2),
    )
    worker_heartbeat_record()
    assert list(WorkerPing.objects.values_list("token", flat=True))[0].startswith("heartbeat-")
    assert WorkerPing.objects.count() == 1


@pytest.mark.parametrize("down", ["default", "pages"])
def test_a_cache_that_is_down_is_named_at_once(client, settings, down):
    """Redis refusing connections (the rate-limit store or the page cache): /health/ready/ says
    "cache" within the health deadline."""
    import time

    worker_heartbeat_record()
    up = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    gone = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:9/0",
    }
    settings.CACHES = {alias: gone if alias == down else up for alias in ("default", "pages")}
    started = time.monotonic()
    response = client.get(reverse("core:ready"))
    took = time.monotonic() - started
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["cache"], body
    assert "ConnectionError" in body["checks"]["cache"]["detail"]
    assert down in body["checks"]["cache"]["detail"]
    assert took < settings.HEALTH_CHECK_TIMEOUT_SECONDS + 0.5
    # Liveness does not depend on the cache.
    assert client.get(reverse("core:health")).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_database_caches_stay_ready_while_another_writer_holds_the_lock(client, settings):
    """The embedded default keeps both caches in the database. A long write elsewhere (the
    demo's seed, a refresh) holds the write lock for seconds; readiness must not report the
    cache as silent meanwhile. Held here by a second connection: SQLite's one write lock, or
    on PostgreSQL a lock on the cache tables that lets readers through but not writers."""
    from django.db import connection

    worker_heartbeat_record()
    settings.CACHES = {
        "default": settings.CACHES["database"],
        "pages": settings.CACHES["database_pages"],
    }
    if connection.vendor == "sqlite":
        import sqlite3

        holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    else:
        import psycopg

        params = connection.get_connection_params()
        holder = psycopg.connect(**params)
        holder.execute("LOCK TABLE django_cache, django_page_cache IN EXCLUSIVE MODE")
    try:
        response = client.get(reverse("core:ready"))
    finally:
        holder.rollback()
        holder.close()
    body = response.json()
    assert body["checks"]["cache"]["ok"], body
    assert "DatabaseCache" in body["checks"]["cache"]["detail"]
    assert response.status_code == 200, body
