"""Per-configuration request limits held across every worker and process.

A model configuration may set `max_concurrency` (requests in flight at once) and
`requests_per_minute`. The gateway takes a lease before each HTTP attempt and returns it after,
so the limits hold for retries too, and across all Celery workers, threads and web processes
sharing the same broker or database:

- Redis (when the broker is Redis, or LLM_LIMITS_REDIS_URL is set): one Lua script checks and
  takes both limits atomically, using the Redis server's clock so workers on hosts with skewed
  clocks agree. Concurrency is a sorted set of lease tokens scored by expiry (a semaphore whose
  leases expire, so a killed worker's slot comes back after LEASE_SECONDS); the rate is a
  sliding one-minute window of request start times.
- The database otherwise (the SQLite demo, or PostgreSQL without Redis): lease rows, checked
  and written under a lock on the configuration's row. Slower, but needs nothing else running.

Waiting is bounded (settings.LLM_LIMIT_MAX_WAIT_SECONDS, then a retryable LLMError) and visible:
each attempt records the time it waited in `LLMCall.limit_wait_ms`, and long waits are logged.
Configurations without limits, and offline ones (no HTTP), skip all of this.
"""

import logging
import os
import random
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from .exceptions import LLMError
from .models import ModelConfiguration, RequestLease

if TYPE_CHECKING:
    from redis import Redis
    from redis.commands.core import Script

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0
LOG_WAIT_SECONDS = 5.0
UNREACHABLE_RETRY_SECONDS = 0.5  # how often a store that did not answer is asked again


@dataclass
class Lease:
    configuration_id: int
    token: str
    waited_seconds: float = 0.0
    backend: "LimitBackend | None" = None


class LimitBackend(Protocol):
    # What the backend raises while its store is down or restarting: waited out, not raised.
    unreachable: tuple[type[BaseException], ...]

    def try_acquire(self, configuration: ModelConfiguration, token: str) -> float:
        """0 when the lease was taken, else the seconds worth waiting before trying again."""

    def release(self, configuration_id: int, token: str) -> None: ...


def lease_seconds() -> float:
    """How long a lease lives if never returned: longer than any request can take."""
    return settings.LLM_TIMEOUT_SECONDS + 30.0


def leases_held(leases: QuerySet[RequestLease], now: datetime) -> QuerySet[RequestLease]:
    """The one rule for a live request lease: not given back, and not yet expired at `now`."""
    return leases.filter(released_at=None, expires_at__gt=now)


# --- Redis ----------------------------------------------------------------------------------

_ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit = tonumber(ARGV[2])
local rpm = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= limit then
    return 0
  end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 60)
  if redis.call('ZCARD', KEYS[2]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return -math.max(1, math.ceil((tonumber(oldest[2]) + 60 - now) * 1000))
  end
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  redis.call('EXPIRE', KEYS[2], 120)
end
if limit > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(ttl) + 60)
end
return 1
"""


class RedisLimits:
    # A freed slot is noticed within this many seconds; Redis answers in well under 1 ms.
    poll_seconds = 0.005

    def __init__(self, url: str) -> None:
        import redis  # only deployments with the Redis backend load its client

        self.url = url
        self.unreachable: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        # The client and the acquiring script registered on it, per process.
        self._clients: dict[int, tuple[Redis, Script]] = {}
        self._lock = threading.Lock()

    def _client(self) -> "tuple[Redis, Script]":
        import redis  # only deployments with the Redis backend load its client

        # Per process: a forked worker must not share its parent's sockets.
        pid = os.getpid()
        with self._lock:
            entry = self._clients.get(pid)
            if entry is None:
                # Bounded, so a store that accepts connections but never answers is noticed.
                client = redis.Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)
                entry = (client, client.register_script(_ACQUIRE_SCRIPT))
                self._clients[pid] = entry
            return entry

    @staticmethod
    def keys(configuration_id: int) -> list[str]:
        prefix = settings.LLM_LIMITS_KEY_PREFIX
        return [f"{prefix}:{configuration_id}:inflight", f"{prefix}:{configuration_id}:starts"]

    def try_acquire(self, configuration: ModelConfiguration, token: str) -> float:
        _, acquire = self._client()
        result = int(
            acquire(
                keys=self.keys(configuration.pk),
                args=[
                    token,
                    configuration.max_concurrency or 0,
                    configuration.requests_per_minute or 0,
                    lease_seconds(),
                ],
            )
        )
        if result == 1:
            return 0.0
        return -result / 1000 if result < 0 else self.poll_seconds

    def release(self, configuration_id: int, token: str) -> None:
        client, _ = self._client()
        client.zrem(self.keys(configuration_id)[0], token)


# --- Database -------------------------------------------------------------------------------


class DatabaseLimits:
    poll_seconds = 0.05
    # A database error may have broken the caller's transaction: it is raised, not waited out.
    unreachable: tuple[type[BaseException], ...] = ()

    def try_acquire(self, configuration: ModelConfiguration, token: str) -> float:
        now = timezone.now()
        with transaction.atomic():
            # The row lock serializes acquirers of one configuration (SQLite serializes all
            # writers anyway), so the count and the insert below cannot interleave.
            ModelConfiguration.objects.select_for_update().filter(pk=configuration.pk).exists()
            leases = RequestLease.objects.filter(configuration_id=configuration.pk)
            if configuration.max_concurrency:
                in_flight = leases_held(leases, now).count()
                if in_flight >= configuration.max_concurrency:
                    return self.poll_seconds
            if configuration.requests_per_minute:
                window = leases.filter(acquired_at__gt=now - timedelta(seconds=WINDOW_SECONDS))
                if window.count() >= configuration.requests_per_minute:
                    oldest = window.order_by("acquired_at").values_list("acquired_at", flat=True)
                    wait = (oldest[0] + timedelta(seconds=WINDOW_SECONDS) - now).total_seconds()
                    return max(self.poll_seconds, wait)
            RequestLease.objects.create(
                configuration_id=configuration.pk,
                token=token,
                acquired_at=now,
                expires_at=now + timedelta(seconds=lease_seconds()),
            )
            if random.random() < 0.02:  # noqa: S311 - occasional pruning, not security
                leases.filter(acquired_at__lt=now - timedelta(seconds=2 * WINDOW_SECONDS)).filter(
                    # Returned, or expired: neither counts towards either limit any more.
                    **{"released_at__isnull": False}
                ).delete()
                leases.filter(expires_at__lt=now - timedelta(seconds=WINDOW_SECONDS)).delete()
        return 0.0

    def release(self, configuration_id: int, token: str) -> None:
        RequestLease.objects.filter(token=token).update(released_at=timezone.now())


# --- Choosing a backend, acquiring, releasing --------------------------------------------------

_backend: LimitBackend | None = None
_backend_lock = threading.Lock()


def backend() -> LimitBackend:
    global _backend
    with _backend_lock:
        if _backend is None:
            choice = settings.LLM_LIMITS_BACKEND
            redis_url = settings.LLM_LIMITS_REDIS_URL
            if choice == "redis" or (choice == "auto" and redis_url):
                _backend = RedisLimits(redis_url)
            else:
                _backend = DatabaseLimits()
        return _backend


def backend_set(new: LimitBackend | None) -> None:
    """Switch backends (tests); None chooses again from settings on next use."""
    global _backend
    with _backend_lock:
        _backend = new


def has_limits(configuration: ModelConfiguration) -> bool:
    return not configuration.is_offline and bool(
        configuration.max_concurrency or configuration.requests_per_minute
    )


def acquire(configuration: ModelConfiguration) -> Lease | None:
    """Wait for a concurrency slot and a rate slot; None when the configuration has no limits.

    Raises a retryable LLMError after settings.LLM_LIMIT_MAX_WAIT_SECONDS.
    """
    if not has_limits(configuration):
        return None
    limits = backend()
    token = uuid.uuid4().hex
    started = time.monotonic()
    deadline = started + settings.LLM_LIMIT_MAX_WAIT_SECONDS
    logged = False
    down: BaseException | None = None
    while True:
        try:
            wait = limits.try_acquire(configuration, token)
        except limits.unreachable as error:
            # Asked again with the same token: a take the store applied but whose answer was
            # lost is the same lease, not a second one.
            if down is None:
                logger.warning("The request limits store did not answer (%s); waiting", error)
            down, wait = error, UNREACHABLE_RETRY_SECONDS
        else:
            down = None
        now = time.monotonic()
        if wait <= 0:
            return Lease(configuration.pk, token, now - started, limits)
        if now + wait > deadline:
            raise LLMError(
                f"Waited {now - started:.0f} s for a request slot on {configuration.name!r} "
                + (
                    f"(the request limits store did not answer: {down})."
                    if down is not None
                    else f"(limits: {configuration.max_concurrency or 'no'} at once, "
                    f"{configuration.requests_per_minute or 'no'} per minute); the endpoint's "
                    "limits are too tight for the work queued on it."
                ),
                retryable=True,
            )
        if not logged and now - started > LOG_WAIT_SECONDS:
            logger.info("Waiting for a request slot on %s", configuration.name)
            logged = True
        # A little jitter so waiters do not all retry in the same instant.
        time.sleep(wait * random.uniform(1.0, 1.5))  # noqa: S311


def release(lease: Lease | None) -> None:
    """Return the slot; releasing a lease twice is harmless."""
    if lease is not None and lease.backend is not None:
        held, lease.backend = lease.backend, None
        try:
            held.release(lease.configuration_id, lease.token)
        except held.unreachable as error:
            # Never raised over the reply the lease was held for: the slot lapses by itself.
            logger.warning(
                "Could not return a request slot (%s); it lapses within %.0f s",
                error,
                lease_seconds(),
            )
