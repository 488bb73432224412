"""Where the batch engine's permit pools (`llm.permits`) take permits from: blocks of members of
the Redis sorted set the per-call limits use (`llm.limits`), or of `RequestLease` rows."""

import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from . import limits
from .models import ModelConfiguration, RequestLease

# Runs a function on the loop's database thread: ``await run_sync(fn, *args)``.
RunSync = Callable[..., Awaitable[Any]]

_BLOCK_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local want = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local rpm = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local grant = want
-- The provider asked for a pause (its rate-limit headers; `llm.limits`): nothing is granted.
if redis.call('PTTL', KEYS[5]) > 0 then
  return 0
end
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  grant = math.min(grant, limit - redis.call('ZCARD', KEYS[1]))
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 60)
  grant = math.min(grant, rpm - redis.call('ZCARD', KEYS[2]))
end
if grant <= 0 then
  return 0
end
for i = 1, grant do
  local member = ARGV[1] .. ':' .. i
  if limit > 0 then redis.call('ZADD', KEYS[1], now + ttl, member) end
  if rpm > 0 then redis.call('ZADD', KEYS[2], now, member) end
end
if limit > 0 then redis.call('EXPIRE', KEYS[1], math.ceil(ttl) + 60) end
if rpm > 0 then redis.call('EXPIRE', KEYS[2], 120) end
return grant
"""

# Plain ZADD, not XX: a permit in use here counts even if the store lost it (restarted empty)
# or dropped it as lapsed meanwhile.
_RENEW_SCRIPT = """
local t = redis.call('TIME')
local expiry = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], expiry, ARGV[i]) end
return 1
"""


class RedisBlocks:
    """Blocks of permits in Redis (redis.asyncio, on the engine's event loop)."""

    def __init__(self, url: str) -> None:
        import redis.asyncio  # only deployments with the Redis backend load its client

        # Bounded, so a store that accepts connections but never answers is noticed as down.
        self.client = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        # What the client raises while the store is down or restarting.
        self.unreachable: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._take = self.client.register_script(_BLOCK_SCRIPT)
        self._renew = self.client.register_script(_RENEW_SCRIPT)

    async def take(self, configuration: ModelConfiguration, want: int) -> list[str]:
        token = uuid.uuid4().hex
        granted = int(
            await self._take(
                keys=limits.RedisLimits.keys(configuration.pk),
                args=[
                    token,
                    want,
                    configuration.max_concurrency or 0,
                    configuration.requests_per_minute or 0,
                    limits.permit_lease_seconds(),
                ],
            )
        )
        return [f"{token}:{i}" for i in range(1, granted + 1)]

    async def renew(self, configuration_id: int, members: list[str]) -> None:
        if members:
            key = limits.RedisLimits.keys(configuration_id)[0]
            await self._renew(keys=[key], args=[limits.permit_lease_seconds(), *members])

    async def give_back(self, configuration_id: int, members: list[str]) -> None:
        if members:
            await self.client.zrem(limits.RedisLimits.keys(configuration_id)[0], *members)

    async def paused_for(self, configuration_id: int) -> float:
        """Seconds left of a pause the provider asked for (`llm.limits`); 0: none."""
        left = await self.client.pttl(limits.RedisLimits.keys(configuration_id)[4])
        return max(0, int(left)) / 1000


class DatabaseBlocks:
    """Blocks of `RequestLease` rows (the embedded default), written through `run_sync`."""

    unreachable: tuple[type[BaseException], ...] = (DatabaseError,)

    def __init__(self, run_sync: RunSync) -> None:
        self.run_sync = run_sync

    async def take(self, configuration: ModelConfiguration, want: int) -> list[str]:
        return await self.run_sync(self._take, configuration, want)

    @staticmethod
    def _take(configuration: ModelConfiguration, want: int) -> list[str]:
        now = timezone.now()
        with transaction.atomic():
            paced_until = (
                ModelConfiguration.objects.select_for_update()
                .filter(pk=configuration.pk)
                .values_list("paced_until", flat=True)
                .first()
            )
            if paced_until is not None and paced_until > now:
                return []  # the provider asked for a pause (`llm.limits`)
            leases = RequestLease.objects.filter(configuration_id=configuration.pk)
            grant = want
            if configuration.max_concurrency:
                held = limits.leases_held(leases, now).count()
                grant = min(grant, configuration.max_concurrency - held)
            if configuration.requests_per_minute:
                window = leases.filter(acquired_at__gt=now - timedelta(seconds=60)).count()
                grant = min(grant, configuration.requests_per_minute - window)
            if grant <= 0:
                return []
            expires = now + timedelta(seconds=limits.permit_lease_seconds())
            rows = [
                RequestLease(
                    configuration_id=configuration.pk,
                    token=uuid.uuid4().hex,
                    acquired_at=now,
                    expires_at=expires,
                )
                for _ in range(grant)
            ]
            RequestLease.objects.bulk_create(rows)
        return [row.token for row in rows]

    async def renew(self, configuration_id: int, members: list[str]) -> None:
        if members:
            expires = timezone.now() + timedelta(seconds=limits.permit_lease_seconds())
            await self.run_sync(
                lambda: RequestLease.objects.filter(token__in=members).update(expires_at=expires)
            )

    async def give_back(self, configuration_id: int, members: list[str]) -> None:
        if members:
            await self.run_sync(
                lambda: RequestLease.objects.filter(token__in=members).update(
                    released_at=timezone.now()
                )
            )

    async def paused_for(self, configuration_id: int) -> float:
        paced_until = await self.run_sync(
            lambda: (
                ModelConfiguration.objects.filter(pk=configuration_id)
                .values_list("paced_until", flat=True)
                .first()
            )
        )
        return max(0.0, (paced_until - timezone.now()).total_seconds()) if paced_until else 0.0


# Where a pool takes its permits from: the shared backend the per-call limits use.
PermitBlocks = RedisBlocks | DatabaseBlocks


def blocks_for(run_sync: RunSync) -> PermitBlocks:
    """The backend the per-call limits use, in its block form."""
    chosen = limits.backend()
    if isinstance(chosen, limits.RedisLimits):
        return RedisBlocks(chosen.url)
    return DatabaseBlocks(run_sync)
