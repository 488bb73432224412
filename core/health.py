"""Health checks that answer within a deadline, whatever the dependency does.

A database that accepts connections but never answers, or a Redis that hangs, must not hang
the health endpoints a load balancer polls. Each dependency is probed on its own long-lived
thread (one per process and component, keeping its own connection, so a check costs a round
trip, not a connection); the request waits at most HEALTH_CHECK_TIMEOUT_SECONDS for all of them
together and reports a probe still running as "no answer within …". While a probe hangs, later
checks do not queue behind it: they report it at once with how long it has been waiting.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from celery import current_app
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


class _Probe:
    """One component's prober thread; `start` returns a future, or None while one still runs."""

    def __init__(self, name: str, fn: Callable[[], str]) -> None:
        self.name = name
        self.fn = fn
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"health-{name}")
        self._running: Future | None = None
        self._since = 0.0
        self._lock = threading.Lock()

    def start(self) -> tuple[Future | None, float]:
        with self._lock:
            if self._running is not None and not self._running.done():
                return None, time.monotonic() - self._since
            self._since = time.monotonic()
            self._running = self._executor.submit(self.fn)
            return self._running, 0.0


def _database() -> str:
    close_old_connections()  # this thread's connection obeys CONN_MAX_AGE like a request's
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        connection.close()
        raise
    return connection.vendor


def _cache_store_probe(alias: str) -> None:
    store = caches[alias]
    key = f"health:{uuid.uuid4().hex}"
    if isinstance(store, DatabaseCache):
        # A database cache lives in the database the "database" probe already checks; a write
        # would wait for the database's one write lock, which on SQLite a long write (the demo's
        # seed, a refresh) holds for seconds. Waiting for a lock is not being unready, so read:
        # that proves the cache table is there and answers, without queueing behind writers.
        store.get(key)
        return
    store.set(key, "1", 10)
    read = store.get(key)
    store.delete(key)
    if read != "1":
        raise RuntimeError(f"the {alias} cache could not read back a value written")


def _cache() -> str:
    # Both stores: the rate-limit state (its loss would refuse sign-in) and the page cache (its
    # loss only slows pages down); either failing is worth an operator's look.
    close_old_connections()  # a database cache's connection obeys CONN_MAX_AGE like a request's
    backends = []
    for alias in ("default", "pages"):
        try:
            _cache_store_probe(alias)
        except RuntimeError:
            raise
        except Exception as error:
            raise RuntimeError(f"the {alias} cache: {type(error).__name__}: {error}") from error
        backends.append(f"{alias}: {settings.CACHES[alias]['BACKEND'].rsplit('.', 1)[-1]}")
    return ", ".join(backends)


def _broker() -> str:
    # The project's app (impactbench_site/celery.py), without core importing the project.
    timeout = settings.HEALTH_CHECK_TIMEOUT_SECONDS
    with current_app.connection_for_write(
        url=settings.CELERY_BROKER_URL, connect_timeout=timeout
    ) as broker:
        # One try, no pause before giving up: the deadline is the request's, not kombu's.
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
        return broker.transport_cls


_PROBES = {
    name: _Probe(name, fn)
    for name, fn in (("database", _database), ("cache", _cache), ("broker", _broker))
}


def probes_close() -> None:
    """Close the probers' database connections (a test database is dropped after the tests)."""
    for probe in _PROBES.values():  # the cache prober connects too when a cache is a table
        if probe._running is not None:
            probe._executor.submit(lambda: connection.close()).result(timeout=10)


def components_check(names: tuple[str, ...]) -> list[Check]:
    """Probe these components at once; within the deadline each is ok, failing, or silent."""
    timeout = settings.HEALTH_CHECK_TIMEOUT_SECONDS
    started = time.monotonic()
    pending = {name: _PROBES[name].start() for name in names}
    checks = []
    for name, (future, waiting) in pending.items():
        if future is None:
            checks.append(Check(name, False, f"no answer for {waiting:.0f} s (still waiting)"))
            continue
        try:
            detail = future.result(timeout=max(0.0, timeout - (time.monotonic() - started)))
        except FutureTimeout:
            checks.append(Check(name, False, f"no answer within {timeout:g} s"))
        except Exception as error:  # noqa: BLE001 - reported, not raised
            logger.warning("Health check of the %s failed: %s", name, error)
            checks.append(Check(name, False, f"{type(error).__name__}: {error}"))
        else:
            checks.append(Check(name, True, detail))
    return checks
