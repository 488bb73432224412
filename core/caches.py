"""The two caches and how the site behaves when one cannot be reached.

``default`` holds rate-limit state (allauth's sign-in, sign-up and password-reset counters,
which read ``django.core.cache.cache``): a lockout must last until it expires, so the embedded
database backend here deletes expired rows only and never culls live ones. ``pages`` holds the
public page cache and label profiles: anything in it can be rebuilt, so it is culled at a
deliberate size and a failure to reach it only costs a render.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.db import DatabaseCache
from django.db import connections
from django.db.backends.utils import CursorWrapper

logger = logging.getLogger(__name__)

PAGE_CACHE_ALIAS = "pages"
# A store that is down fails every request; one warning a minute per process says so.
_WARN_EVERY_SECONDS = 60.0
_last_warning = 0.0

try:  # The Redis client is installed with Celery's Redis transport; the embedded default has none.
    from redis.exceptions import RedisError
except ImportError:  # pragma: no cover - redis is a dependency of every install
    RedisError = OSError  # type: ignore[assignment,misc]  # a stand-in class, not redis's

# What a cache backend raises when its server cannot be reached.
CACHE_STORE_ERRORS: tuple[type[BaseException], ...] = (RedisError, ConnectionError, TimeoutError)


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


def cache_failure_log(operation: str, error: BaseException) -> None:
    """Log that a cache could not be used, at most once a minute per process."""
    global _last_warning
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
