"""The Redis backend of the request limits: one Lua script per operation, on the server's
clock, so workers on hosts with skewed clocks agree (see `llm.limits`)."""

import logging
import math
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings

from core.breaker import CircuitBreaker

from ..models import ModelConfiguration
from . import common
from .common import MAX_PACE_SECONDS, NO_TOKENS, Tokens, lease_seconds

if TYPE_CHECKING:
    from redis import Redis
    from redis.commands.core import Script


# KEYS: in flight, request starts, token starts, token amounts, pause.
# ARGV: token, max_concurrency, requests_per_minute, lease ttl, input and output tokens per
# minute, input and output tokens needed, the token window in seconds.
# Every limit is checked before anything is written.
_ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit = tonumber(ARGV[2])
local rpm = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local itpm = tonumber(ARGV[5])
local otpm = tonumber(ARGV[6])
local need_in = tonumber(ARGV[7])
local need_out = tonumber(ARGV[8])
local window = tonumber(ARGV[9])
local paused = redis.call('PTTL', KEYS[5])
if paused > 0 then
  return -paused
end
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
end
local tpm = itpm > 0 or otpm > 0
if tpm then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - window)
  for i = 1, #gone do redis.call('HDEL', KEYS[4], gone[i]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
  local live = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
  local ins, outs, at = {}, {}, {}
  local sum_in, sum_out = 0, 0
  for i = 1, #live, 2 do
    local amount = redis.call('HGET', KEYS[4], live[i]) or '0:0'
    local sep = string.find(amount, ':', 1, true)
    local a_in = tonumber(string.sub(amount, 1, sep - 1))
    local a_out = tonumber(string.sub(amount, sep + 1))
    sum_in = sum_in + a_in
    sum_out = sum_out + a_out
    ins[#ins + 1] = a_in
    outs[#outs + 1] = a_out
    at[#at + 1] = tonumber(live[i + 1])
  end
  -- A request larger than a whole budget goes alone, once the window is empty.
  local over_in = 0
  if itpm > 0 and sum_in > 0 then over_in = sum_in + need_in - itpm end
  local over_out = 0
  if otpm > 0 and sum_out > 0 then over_out = sum_out + need_out - otpm end
  if over_in > 0 or over_out > 0 then
    -- The first moment enough of the oldest reservations have left the window.
    local free_at = at[#at] + window
    for j = 1, #at do
      over_in = over_in - ins[j]
      over_out = over_out - outs[j]
      if over_in <= 0 and over_out <= 0 then
        free_at = at[j] + window
        break
      end
    end
    return -math.max(1, math.ceil((free_at - now) * 1000))
  end
end
if rpm > 0 then
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  redis.call('EXPIRE', KEYS[2], 120)
end
if tpm then
  redis.call('ZADD', KEYS[3], now, ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], need_in .. ':' .. need_out)
  redis.call('EXPIRE', KEYS[3], math.ceil(window) + 60)
  redis.call('EXPIRE', KEYS[4], math.ceil(window) + 60)
end
if limit > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(ttl) + 60)
end
return 1
"""

# The reservation becomes the tokens used, counted from now: the provider counted them on
# arrival, before the reply came back, so the window here never frees them before its own.
_SETTLE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[4])) + 60)
redis.call('EXPIRE', KEYS[2], math.ceil(tonumber(ARGV[4])) + 60)
return 1
"""

_PACE_SCRIPT = """
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then
  redis.call('SET', KEYS[1], '1', 'PX', ms)
end
return 1
"""


logger = logging.getLogger(__name__)
T = TypeVar("T")


class RedisLimits:
    # A freed slot is noticed within this many seconds; Redis answers in well under 1 ms.
    poll_seconds = 0.005

    def __init__(self, url: str) -> None:
        import redis  # only deployments with the Redis backend load its client

        self.url = url
        # CircuitOpen, the breaker's refusal, is an OSError: waited out like any outage.
        self.unreachable: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        # The client and the scripts registered on it, per process.
        self._clients: dict[int, tuple[Redis, dict[str, Script]]] = {}
        self._lock = threading.Lock()
        # A store that hangs answers nothing until its socket timeout: after the first one,
        # every thread of the process is refused at once for a window, then one call probes.
        self._breaker = CircuitBreaker(
            "The request limits store",
            open_seconds=settings.LLM_LIMITS_OUTAGE_SKIP_SECONDS,
            failures=(redis.ConnectionError, redis.TimeoutError, OSError),
            logger=logger,
        )

    def _call(self, operation: Callable[[], T]) -> T:
        return self._breaker.call(operation)

    def _client(self) -> "tuple[Redis, dict[str, Script]]":
        import redis  # only deployments with the Redis backend load its client

        # Per process: a forked worker must not share its parent's sockets.
        pid = os.getpid()
        with self._lock:
            entry = self._clients.get(pid)
            if entry is None:
                # Bounded, so a store that accepts connections but never answers is noticed.
                client = redis.Redis.from_url(
                    self.url,
                    socket_connect_timeout=min(2.0, settings.LLM_LIMITS_SOCKET_TIMEOUT),
                    socket_timeout=settings.LLM_LIMITS_SOCKET_TIMEOUT,
                )
                scripts = {
                    "acquire": client.register_script(_ACQUIRE_SCRIPT),
                    "settle": client.register_script(_SETTLE_SCRIPT),
                    "pace": client.register_script(_PACE_SCRIPT),
                }
                entry = (client, scripts)
                self._clients[pid] = entry
            return entry

    @staticmethod
    def keys(configuration_id: int) -> list[str]:
        """In flight, request starts, token starts, token amounts, pause (the script's KEYS)."""
        base = f"{settings.LLM_LIMITS_KEY_PREFIX}:{configuration_id}"
        return [f"{base}:inflight", f"{base}:starts", f"{base}:tokens", f"{base}:amounts",
                f"{base}:paused"]  # fmt: skip

    def try_acquire(
        self, configuration: ModelConfiguration, token: str, need: Tokens = NO_TOKENS
    ) -> float:
        _, scripts = self._client()
        result = int(
            self._call(
                lambda: scripts["acquire"](
                    keys=self.keys(configuration.pk),
                    args=[
                        token,
                        configuration.max_concurrency or 0,
                        configuration.requests_per_minute or 0,
                        lease_seconds(),
                        configuration.input_tokens_per_minute or 0,
                        configuration.output_tokens_per_minute or 0,
                        need.input,
                        need.output,
                        common.TOKEN_WINDOW_SECONDS,
                    ],
                )
            )
        )
        if result == 1:
            return 0.0
        return -result / 1000 if result < 0 else self.poll_seconds

    def release(self, configuration_id: int, token: str) -> None:
        client, _ = self._client()
        self._call(lambda: client.zrem(self.keys(configuration_id)[0], token))

    def settle(self, configuration_id: int, token: str, used: Tokens) -> None:
        _, scripts = self._client()
        keys = self.keys(configuration_id)
        self._call(
            lambda: scripts["settle"](
                keys=keys[2:4], args=[token, used.input, used.output, common.TOKEN_WINDOW_SECONDS]
            )
        )

    def pace(self, configuration_id: int, seconds: float) -> None:
        _, scripts = self._client()
        ms = max(1, math.ceil(min(seconds, MAX_PACE_SECONDS) * 1000))
        self._call(lambda: scripts["pace"](keys=self.keys(configuration_id)[4:], args=[ms]))
