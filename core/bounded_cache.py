"""The page cache on Redis, bounded in bytes and entries by an eviction of its own.

Django's Redis backend ignores ``MAX_ENTRIES``: every distinct page adds a key for its timeout,
and the only limit left is the server's ``maxmemory``. That Redis also holds the Celery queues
and the rate-limit counters, which must not be evicted (it runs ``noeviction``), so a page
cache that grows until Redis is full would make Redis refuse to queue work. An eviction policy
cannot be set per database or per key prefix (``maxmemory-policy`` is the server's), so the
bound is kept here, by the cache itself.

Every write runs one Lua script, atomic on the server, so concurrent web processes cannot
disagree about what is stored:

- the entry is written with its timeout, and recorded under the cache's own prefix in an index
  (a sorted set scored by expiry time, from the server's clock) and a hash of sizes, beside a
  running total;
- index entries already past their expiry (Redis dropped their keys itself) are forgotten
  first, so expiry leaves no bytes counted that are not there;
- then, while the total is over ``MAX_BYTES`` or the index over ``MAX_ENTRIES``, the entry
  nearest its expiry is deleted. Pages are all stored for the same time, so that is the oldest
  page; an entry with a longer timeout (the page render's progress) outlives pages written
  just before it, which is the point of its timeout.

A size is what Redis reports the entry's key uses (``MEMORY USAGE``: value, key and the
allocator's rounding), plus the entry's place in the index and the sizes hash. So the cap
bounds the memory Redis really spends on the cache, not only the bytes of the values. An
entry larger than ``MAX_ENTRY_BYTES`` (default an eighth of ``MAX_BYTES``) is not stored at
all, rather than pushing out many others; the first one a process meets is logged.

Why an index by expiry rather than Redis's own LRU: an LRU would need ``allkeys-lru`` on a
Redis of the cache's own, and one more server to run; the index costs two small structures
and keeps one Redis for everything. Why the server's clock: web processes' clocks may differ,
and the score must match the moment Redis drops the key.

``delete`` and ``delete_many`` update the accounting in the same script; ``clear`` deletes
only keys under the cache's own prefix (never ``FLUSHDB``: the database may be the broker's).
A key removed behind the cache's back (a restart without persistence, an operator's ``DEL``)
stays counted until its recorded expiry, then is forgotten like any expired entry: the total
never drifts for longer than one timeout. ``incr`` (unused by the page cache) is Django's,
uncounted. The scripts name keys they evict that are not in ``KEYS``: fine on one Redis, not
on Redis Cluster (where the page cache would need a server of its own).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.functional import cached_property
from redis.commands.core import Script

from .caches import GuardedRedisCache, GuardedRedisCacheClient, cache_breaker

logger = logging.getLogger(__name__)

# The default cap on one entry, as a share of the whole cache: one entry never empties it.
ENTRY_SHARE = 8
# Bytes an entry costs in the index and the sizes hash besides its key's name (twice): sorted
# set and hash nodes and their tables' share (on Redis 7, 5,000 entries with 80-character keys
# took about 330 bytes each in all; tests/core/test_pagecache_redis_bounded.py checks the sum).
BOOKKEEPING_BYTES = 240
# Expired index entries forgotten per write, so one write never runs long.
SWEEP_LIMIT = 1000

_SET = """
local entry, index, sizes, total_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ttl, max_bytes, max_entries = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local only_if_absent, bookkeeping = ARGV[5] == '1', tonumber(ARGV[6])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local total = tonumber(redis.call('GET', total_key) or '0')
local function forget(key)
  local size = redis.call('HGET', sizes, key)
  if size then
    total = total - tonumber(size)
    redis.call('HDEL', sizes, key)
  end
  redis.call('ZREM', index, key)
end
for _, key in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, ARGV[7])) do
  redis.call('UNLINK', key)
  forget(key)
end
local stored = 0
if not (only_if_absent and redis.call('EXISTS', entry) == 1) then
  forget(entry)
  local expires = '+inf'
  if ttl == '' then
    redis.call('SET', entry, ARGV[1])
  else
    redis.call('SET', entry, ARGV[1], 'PX', ttl)
    expires = now + tonumber(ttl)
  end
  local size = redis.call('MEMORY', 'USAGE', entry) + 2 * #entry + bookkeeping
  redis.call('ZADD', index, expires, entry)
  redis.call('HSET', sizes, entry, size)
  total = total + size
  stored = 1
end
while total > max_bytes or redis.call('ZCARD', index) > max_entries do
  local oldest = redis.call('ZRANGE', index, 0, 0)[1]
  if not oldest then
    break
  end
  redis.call('UNLINK', oldest)
  forget(oldest)
end
if total < 0 or redis.call('ZCARD', index) == 0 then
  total = 0
end
redis.call('SET', total_key, total)
return stored
"""

_DELETE = """
local index, sizes, total_key = KEYS[1], KEYS[2], KEYS[3]
local total = tonumber(redis.call('GET', total_key) or '0')
local deleted = 0
for i = 4, #KEYS do
  local size = redis.call('HGET', sizes, KEYS[i])
  if size then
    total = total - tonumber(size)
    redis.call('HDEL', sizes, KEYS[i])
  end
  redis.call('ZREM', index, KEYS[i])
  deleted = deleted + redis.call('DEL', KEYS[i])
end
if total < 0 then
  total = 0
end
redis.call('SET', total_key, total)
return deleted
"""

_TOUCH = """
local entry, index, ttl = KEYS[1], KEYS[2], ARGV[1]
if redis.call('EXISTS', entry) == 0 then
  return 0
end
if ttl == '' then
  redis.call('ZADD', index, 'XX', '+inf', entry)
  return redis.call('PERSIST', entry)
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', index, 'XX', now + tonumber(ttl), entry)
return redis.call('PEXPIRE', entry, ttl)
"""

_too_large_logged = False


def _milliseconds(timeout: int | None) -> str:
    return "" if timeout is None else str(int(timeout) * 1000)


class BoundedRedisCacheClient(GuardedRedisCacheClient):
    """The guarded client with writes that keep the cache within its bounds."""

    def __init__(
        self,
        servers: list[str],
        *,
        prefix: str,
        max_bytes: int,
        max_entries: int,
        max_entry_bytes: int,
        **options: Any,
    ) -> None:
        super().__init__(servers, **options)
        self.prefix = prefix
        self.index_key = f"{prefix}:bounded-index"
        self.sizes_key = f"{prefix}:bounded-sizes"
        self.total_key = f"{prefix}:bounded-total"
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.max_entry_bytes = max_entry_bytes
        # Registered without a client: each call passes the pool's, and EVALSHA falls back to
        # EVAL once after a restart of Redis (its script cache is empty then).
        self._set_script = Script(None, _SET.encode())  # type: ignore[arg-type]
        self._delete_script = Script(None, _DELETE.encode())  # type: ignore[arg-type]
        self._touch_script = Script(None, _TOUCH.encode())  # type: ignore[arg-type]

    def _store(self, key: Any, value: Any, timeout: int | None, *, only_if_absent: bool) -> bool:
        global _too_large_logged
        data = self._serializer.dumps(value)  # type: ignore[attr-defined]  # Django's own
        size = len(data) if isinstance(data, bytes) else len(str(data))
        if size > self.max_entry_bytes:
            if not _too_large_logged:
                _too_large_logged = True
                logger.warning(
                    "Page cache: an entry of %s bytes (%s) is over the %s bytes one entry may "
                    "take and is not stored; later ones are not logged.",
                    size,
                    key,
                    self.max_entry_bytes,
                )
            return False
        client = self.get_client(key, write=True)
        keys = [key, self.index_key, self.sizes_key, self.total_key]
        args = [
            data,
            _milliseconds(timeout),
            self.max_bytes,
            self.max_entries,
            "1" if only_if_absent else "0",
            BOOKKEEPING_BYTES,
            SWEEP_LIMIT,
        ]
        return bool(self._set_script(keys=keys, args=args, client=client))

    def _delete(self, keys: list[Any]) -> int:
        client = self.get_client(None, write=True)
        bookkeeping = [self.index_key, self.sizes_key, self.total_key]
        return int(self._delete_script(keys=[*bookkeeping, *keys], client=client))

    def _touch(self, key: Any, timeout: int | None) -> bool:
        client = self.get_client(key, write=True)
        keys = [key, self.index_key]
        return bool(self._touch_script(keys=keys, args=[_milliseconds(timeout)], client=client))

    def _clear(self) -> bool:
        client = self.get_client(None, write=True)
        # Only this cache's keys, escaped so a prefix with glob characters matches itself.
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.prefix) + ":*"
        batch: list[bytes] = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                client.unlink(*batch)
                batch = []
        if batch:
            client.unlink(*batch)
        return True

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        if timeout == 0:
            return not self.has_key(key)  # Django's: would be stored, then is gone at once
        return self.breaker.call(partial(self._store, key, value, timeout, only_if_absent=True))

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        if timeout == 0:
            self.delete(key)
            return
        self.breaker.call(partial(self._store, key, value, timeout, only_if_absent=False))

    def set_many(self, data: Mapping[Any, Any], timeout: Any) -> None:
        for key, value in data.items():
            self.set(key, value, timeout)

    def touch(self, key: Any, timeout: Any) -> bool:
        return self.breaker.call(partial(self._touch, key, timeout))

    def delete(self, key: Any) -> bool:
        return self.breaker.call(partial(self._delete, [key])) > 0

    def delete_many(self, keys: Iterable[Any]) -> None:
        self.breaker.call(partial(self._delete, list(keys)))

    def clear(self) -> bool:
        return self.breaker.call(self._clear)

    def usage(self) -> tuple[int, int]:
        """Bytes and entries the cache counts now (for checks and tests)."""
        client = self.get_client(None)

        def read() -> list[Any]:
            pipeline = client.pipeline()
            pipeline.get(self.total_key)
            pipeline.zcard(self.index_key)
            return pipeline.execute()

        total, entries = self.breaker.call(read)
        return int(total or 0), int(entries)


class BoundedRedisCache(GuardedRedisCache):
    """A guarded Redis cache bounded by ``OPTIONS``: ``MAX_BYTES``, ``MAX_ENTRIES`` and
    ``MAX_ENTRY_BYTES`` (default ``MAX_BYTES // 8``). Needs a ``KEY_PREFIX``: its keys and
    bookkeeping are found by it, and ``clear`` deletes nothing else."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS", {}))
        if "MAX_BYTES" not in options or "MAX_ENTRIES" not in options:
            raise ImproperlyConfigured("A bounded Redis cache needs MAX_BYTES and MAX_ENTRIES.")
        self.max_bytes = int(options.pop("MAX_BYTES"))
        self.max_entries = int(options.pop("MAX_ENTRIES"))
        self.max_entry_bytes = int(
            options.pop("MAX_ENTRY_BYTES", None) or self.max_bytes // ENTRY_SHARE
        )
        if not params.get("KEY_PREFIX"):
            raise ImproperlyConfigured("A bounded Redis cache needs a KEY_PREFIX of its own.")
        super().__init__(server, {**params, "OPTIONS": options})

    @cached_property
    def _cache(self) -> BoundedRedisCacheClient:
        servers: list[str] = self._servers  # type: ignore[attr-defined]  # RedisCache's own
        options: dict[str, Any] = self._options  # type: ignore[attr-defined]
        return BoundedRedisCacheClient(
            servers,
            breaker=cache_breaker(servers, open_seconds=self._skip_seconds),
            prefix=self.key_prefix,
            max_bytes=self.max_bytes,
            max_entries=self.max_entries,
            max_entry_bytes=self.max_entry_bytes,
            **options,
        )

    def usage(self) -> tuple[int, int]:
        """Bytes and entries the cache counts now."""
        return self._cache.usage()
