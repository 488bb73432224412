"""The two caches and how the site behaves when one cannot be reached.

``default`` holds rate-limit state (allauth's per-address sign-in, sign-up and password-reset
counters, which read ``django.core.cache.cache``; account lockouts are in the database,
``core.services.sign_in_attempt_begin``): a limit must last until it expires, so the embedded
database backend here deletes expired rows only and never culls live ones. ``pages`` holds the
public page cache and label profiles: anything in it can be rebuilt, so it is culled at a
deliberate size and a failure to reach it only costs a render.

A Redis cache answers within its socket timeout or fails; one that hangs would cost that
timeout on every operation (twenty on some pages). ``GuardedRedisCache`` runs every operation
through one circuit breaker per server and process (``core.breaker``), so after the first
failure the server is skipped at once, as if it had refused, until a probe finds it answering:
a page pays at most one timeout per ``outage_skip_seconds``. What a skipped operation means is
decided where failures already are: a page is rendered uncached, counting a sign-in fails
closed (``core.middleware.RateLimitStoreMiddleware``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.db import connections
from django.db.backends.utils import CursorWrapper
from django.utils.functional import cached_property
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .breaker import CircuitBreaker, CircuitOpen

logger = logging.getLogger(__name__)

PAGE_CACHE_ALIAS = "pages"
# A store that is down fails every request; one warning a minute per process says so.
_WARN_EVERY_SECONDS = 60.0
_last_warning = 0.0

# What a cache backend raises when its server cannot be reached (CircuitOpen, a server being
# skipped, is a ConnectionError).
CACHE_STORE_ERRORS: tuple[type[BaseException], ...] = (RedisError, ConnectionError, TimeoutError)
# Failures that say the server is unreachable or silent; any other answer (a wrong type, say)
# proves it is there.
_OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
# How long a Redis that failed is skipped before one operation tries it again.
OUTAGE_SKIP_SECONDS = 30.0

_breakers: dict[tuple[str, ...], CircuitBreaker] = {}
_breakers_lock = threading.Lock()


class UnculledDatabaseCache(DatabaseCache):
    """A database cache that never deletes an entry before it expires.

    Django's DatabaseCache deletes the keys that sort first once ``MAX_ENTRIES`` is passed,
    whatever they hold; rate-limit counters must not go that way. Past ``MAX_ENTRIES`` this
    backend only sweeps expired rows. Every counter carries its window as timeout, so live
    rows are bounded by what the per-address limits let through in one window.
    """

    _table: str  # the table's name, set by BaseDatabaseCache.__init__ (absent from its stubs)

    def _cull(self, db: str, cursor: CursorWrapper, now: datetime, num: int) -> None:
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        expires = connection.ops.quote_name("expires")
        cursor.execute(
            f"DELETE FROM {table} WHERE {expires} < %s",  # noqa: S608 - quoted names only
            [connection.ops.adapt_datetimefield_value(now)],
        )


def _server_name(server: str) -> str:
    """The server as a log line may show it: host and port, never a password. Databases of
    one server share its breaker: a server that hangs hangs for all of them."""
    parts = urlsplit(server)
    return f"{parts.hostname}:{parts.port or 6379}"


def cache_breaker(servers: list[str], *, open_seconds: float) -> CircuitBreaker:
    """The process's breaker for these Redis servers (every alias and thread on them shares it:
    Django makes a backend per thread, and both aliases may be one server)."""
    key = tuple(sorted({_server_name(server) for server in servers}))
    with _breakers_lock:
        if key not in _breakers:
            _breakers[key] = CircuitBreaker(
                "Cache " + ", ".join(key),
                open_seconds=open_seconds,
                failures=_OUTAGE_ERRORS,
                logger=logger,
            )
        return _breakers[key]


def cache_breakers_forget() -> None:
    """Start every breaker afresh (tests point a cache at a new server under the same URL)."""
    with _breakers_lock:
        _breakers.clear()


class GuardedRedisCacheClient(RedisCacheClient):
    """Django's Redis client with each operation run through the server's breaker."""

    def __init__(self, servers: list[str], *, breaker: CircuitBreaker, **options: Any) -> None:
        super().__init__(servers, **options)
        self.breaker = breaker

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        return self.breaker.call(partial(super().add, key, value, timeout))

    def get(self, key: Any, default: Any) -> Any:
        return self.breaker.call(partial(super().get, key, default))

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        self.breaker.call(partial(super().set, key, value, timeout))

    def touch(self, key: Any, timeout: Any) -> bool:
        return self.breaker.call(partial(super().touch, key, timeout))

    def delete(self, key: Any) -> bool:
        return self.breaker.call(partial(super().delete, key))

    def get_many(self, keys: Iterable[Any]) -> dict[Any, Any]:
        return self.breaker.call(partial(super().get_many, keys))

    def has_key(self, key: Any) -> bool:
        return self.breaker.call(partial(super().has_key, key))

    def incr(self, key: Any, delta: int) -> Any:
        return self.breaker.call(partial(super().incr, key, delta))

    def set_many(self, data: Mapping[Any, Any], timeout: Any) -> None:
        self.breaker.call(partial(super().set_many, data, timeout))

    def delete_many(self, keys: Iterable[Any]) -> None:
        self.breaker.call(partial(super().delete_many, keys))

    def clear(self) -> bool:
        return self.breaker.call(super().clear)


class GuardedRedisCache(RedisCache):
    """Django's Redis cache behind a circuit breaker; ``OPTIONS["outage_skip_seconds"]`` says
    how long a server that failed is skipped (``OUTAGE_SKIP_SECONDS`` by default)."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS", {}))
        self._skip_seconds = float(options.pop("outage_skip_seconds", OUTAGE_SKIP_SECONDS))
        super().__init__(server, {**params, "OPTIONS": options})

    @cached_property
    def _cache(self) -> GuardedRedisCacheClient:
        servers: list[str] = self._servers  # type: ignore[attr-defined]  # RedisCache's own
        options: dict[str, Any] = self._options  # type: ignore[attr-defined]
        breaker = cache_breaker(servers, open_seconds=self._skip_seconds)
        return GuardedRedisCacheClient(servers, breaker=breaker, **options)


def cache_failure_log(operation: str, error: BaseException) -> None:
    """Log that a cache could not be used, at most once a minute per process; a server being
    skipped is not logged again (its breaker said so when it opened)."""
    global _last_warning
    if isinstance(error, CircuitOpen):
        return
    now = time.monotonic()
    if now - _last_warning >= _WARN_EVERY_SECONDS:
        _last_warning = now
        logger.warning("Cache unavailable (%s): %s: %s", operation, type(error).__name__, error)


def page_cache() -> BaseCache:
    """The cache of rebuildable pages and figures (``default`` where no ``pages`` alias exists)."""
    return caches[PAGE_CACHE_ALIAS if PAGE_CACHE_ALIAS in settings.CACHES else "default"]


def page_cache_get(key: str) -> Any:
    """The stored value, or None when absent or when the cache cannot be reached."""
    try:
        return page_cache().get(key)
    except Exception as error:  # noqa: BLE001 - any backend failure means "not cached"
        cache_failure_log("get", error)
        return None


def page_cache_set(key: str, value: Any, timeout: int) -> None:
    """Store a value if the cache can be reached; a failure is logged and otherwise ignored."""
    try:
        page_cache().set(key, value, timeout)
    except Exception as error:  # noqa: BLE001 - a page that is not stored is rendered next time
        cache_failure_log("set", error)
