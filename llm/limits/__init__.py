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

Token limits (`input_tokens_per_minute`, `output_tokens_per_minute`) are a sliding one-minute
window of tokens in the same store: before an attempt its expected tokens are reserved (input:
the prompt's characters / CHARS_PER_TOKEN; output: its max_tokens, else
DEFAULT_OUTPUT_RESERVE) and once the reply is in, the reservation is corrected to the usage it
reports, without the input tokens read from the prompt cache (which Anthropic does not count on
most models), so the window holds what was actually used. An attempt that failed keeps its
reservation: whether the provider counted it is unknown. A request larger than a whole budget
goes alone, once the window is empty.

Pacing: a reply whose rate-limit headers (`llm.providers.ratelimits`) say less is left than the
next request needs pauses the configuration until that reset, for every worker (a key with an
expiry in Redis, `ModelConfiguration.paced_until` in the database).

Waiting is bounded (settings.LLM_LIMIT_MAX_WAIT_SECONDS, then a retryable LLMError) and visible:
each attempt records the time it waited in `LLMCall.limit_wait_ms`, and long waits are logged.
Configurations without limits, and offline ones (no HTTP), skip all of this.
"""

import asyncio
import logging
import random
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from ..exceptions import LLMError
from ..models import ModelConfiguration
from ..providers.base import ChatRequest, ProviderReply
from .common import (
    MAX_PACE_SECONDS,
    NO_TOKENS,
    WINDOW_SECONDS,
    Tokens,
    has_token_limits,
    lease_seconds,
    leases_held,
    permit_lease_seconds,
)
from .database_backend import DatabaseLimits
from .redis_backend import RedisLimits

__all__ = [
    "MAX_PACE_SECONDS",
    "WINDOW_SECONDS",
    "DatabaseLimits",
    "Lease",
    "LimitBackend",
    "RedisLimits",
    "Tokens",
    "acquire",
    "acquire_async",
    "pause_after",
    "pace_refused",
    "backend",
    "backend_set",
    "has_limits",
    "has_token_limits",
    "lease_seconds",
    "leases_held",
    "permit_lease_seconds",
    "release",
    "settle",
    "tokens_needed",
    "tokens_used",
    "wait_error",
]

logger = logging.getLogger(__name__)
# Runs a backend method off the event loop: ``await call(fn, *args)``.
OffLoop = Callable[..., Awaitable[Any]]

LOG_WAIT_SECONDS = 5.0
UNREACHABLE_RETRY_SECONDS = 0.5  # how often a store that did not answer is asked again
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text; corrected once usage is in
DEFAULT_OUTPUT_RESERVE = 1024  # a request without max_tokens (Anthropic's default here too)


@dataclass
class Lease:
    configuration_id: int
    token: str
    waited_seconds: float = 0.0
    backend: "LimitBackend | None" = None
    reserved: Tokens = NO_TOKENS
    # Called once the lease is given back (the engine's admission of per-call waiters).
    on_release: Callable[[], object] | None = None


class LimitBackend(Protocol):
    # What the backend raises while its store is down or restarting: waited out, not raised.
    unreachable: tuple[type[BaseException], ...]

    def try_acquire(
        self, configuration: ModelConfiguration, token: str, need: Tokens = NO_TOKENS
    ) -> float:
        """0 when the lease was taken, else the seconds worth waiting before trying again."""

    def release(self, configuration_id: int, token: str) -> None: ...

    def settle(self, configuration_id: int, token: str, used: Tokens) -> None:
        """Correct the lease's reserved tokens to what was used (while still in the window)."""

    def pace(self, configuration_id: int, seconds: float) -> None:
        """Send nothing on the configuration for `seconds` (a pause already longer stays)."""


def tokens_needed(configuration: ModelConfiguration, request: ChatRequest) -> Tokens:
    """What an attempt reserves before it is sent; nothing without token limits."""
    if not has_token_limits(configuration):
        return Tokens()
    characters = sum(len(str(m.get("content") or "")) for m in request.messages)
    output = request.parameters.get("max_tokens") or DEFAULT_OUTPUT_RESERVE
    return Tokens(input=-(-characters // CHARS_PER_TOKEN), output=int(output))


def tokens_used(reply: ProviderReply) -> Tokens | None:
    """A reply's tokens as the limits count them: cache reads are not input. None when the
    reply reports no usage (some servers send none): the reservation then stands."""
    usage = reply.usage
    if not (usage.prompt_tokens or usage.completion_tokens):
        return None
    return Tokens(
        input=max(0, usage.prompt_tokens - usage.cached_prompt_tokens),
        output=usage.completion_tokens,
    )


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
        configuration.max_concurrency
        or configuration.requests_per_minute
        or has_token_limits(configuration)
    )


def describe(configuration: ModelConfiguration) -> str:
    """The configuration's limits, for a message about waiting for them."""
    # Translators: "no" stands for a number of requests: there is no such limit.
    unlimited = pgettext("no limit", "no")
    parts = [
        _("%(count)s at once") % {"count": configuration.max_concurrency or unlimited},
        _("%(count)s per minute") % {"count": configuration.requests_per_minute or unlimited},
    ]
    if configuration.input_tokens_per_minute:
        parts.append(
            _("%(count)s input tokens per minute")
            % {"count": configuration.input_tokens_per_minute}
        )
    if configuration.output_tokens_per_minute:
        parts.append(
            _("%(count)s output tokens per minute")
            % {"count": configuration.output_tokens_per_minute}
        )
    return ", ".join(parts)


def wait_error(
    configuration: ModelConfiguration, waited: float, down: BaseException | None
) -> LLMError:
    if down is not None:
        message = _(
            "Waited %(seconds).0f s for a request slot on %(configuration)r (the request limits "
            "store did not answer: %(error)s)."
        ) % {"seconds": waited, "configuration": configuration.name, "error": down}
    else:
        message = _(
            "Waited %(seconds).0f s for a request slot on %(configuration)r (limits: "
            "%(limits)s); the endpoint's limits are too tight for the work queued on it, or its "
            "provider asked for a pause."
        ) % {
            "seconds": waited,
            "configuration": configuration.name,
            "limits": describe(configuration),
        }
    return LLMError(message, retryable=True)


def acquire(configuration: ModelConfiguration, need: Tokens = NO_TOKENS) -> Lease | None:
    """Wait for a concurrency slot, a rate slot and `need` in the token window (and for any
    pause the provider's headers asked for); None when the configuration has no limits.

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
            wait = limits.try_acquire(configuration, token, need)
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
            return Lease(configuration.pk, token, now - started, limits, need)
        if now + wait > deadline:
            raise wait_error(configuration, now - started, down)
        if not logged and now - started > LOG_WAIT_SECONDS:
            logger.info("Waiting for a request slot on %s", configuration.name)
            logged = True
        # A little jitter so waiters do not all retry in the same instant.
        time.sleep(wait * random.uniform(1.0, 1.5))  # noqa: S311


async def acquire_async(configuration: ModelConfiguration, need: Tokens, call: "OffLoop") -> Lease:
    """`acquire` on an event loop, one lease per call: the batch engine's way for
    configurations with token limits (a block of permits cannot carry each request's tokens).
    `call` runs a backend method off the loop (the database thread, or a worker thread)."""
    limits = backend()
    token = uuid.uuid4().hex
    started = time.monotonic()
    deadline = started + settings.LLM_LIMIT_MAX_WAIT_SECONDS
    down: BaseException | None = None
    while True:
        try:
            wait = await call(limits.try_acquire, configuration, token, need)
        except limits.unreachable as error:
            down, wait = error, UNREACHABLE_RETRY_SECONDS
        else:
            down = None
        now = time.monotonic()
        if wait <= 0:
            return Lease(configuration.pk, token, now - started, limits, need)
        if now + wait > deadline:
            raise wait_error(configuration, now - started, down)
        await asyncio.sleep(wait * random.uniform(1.0, 1.5))  # noqa: S311


def pause_after(reply: ProviderReply, need: Tokens) -> float:
    """Seconds the reply's rate-limit headers say to send nothing more on its configuration,
    judging by what a request like this one needs; 0: no pause."""
    return reply.rate_limits.pause_seconds(
        {
            "tokens": need.input + need.output,
            "input_tokens": need.input,
            "output_tokens": need.output,
        }
    )


def settle(
    lease: Lease | None,
    reply: ProviderReply,
    *,
    configuration: ModelConfiguration,
    held: LimitBackend | None = None,
) -> None:
    """After a reply: its actual tokens replace the lease's reservation, and a reply saying
    less is left than another such request needs pauses the configuration until the reset.
    Without a lease (the engine's permits), only the pause; `held` is then the backend."""
    held = lease.backend if lease is not None else held
    if held is None:
        return
    try:
        used = tokens_used(reply)
        if lease is not None and has_token_limits(configuration) and used is not None:
            held.settle(lease.configuration_id, lease.token, used)
        pause = pause_after(reply, lease.reserved if lease is not None else NO_TOKENS)
        if pause > 0:
            logger.info("%s asked for a pause of %.1f s", configuration.name, pause)
            held.pace(configuration.pk, pause)
    except held.unreachable as error:
        # Never raised over the reply: the window keeps the estimate, which lapses in a minute.
        logger.warning("Could not correct a token reservation (%s)", error)


def pace_refused(configuration: ModelConfiguration, seconds: float) -> None:
    """The provider refused a request for its rate limit and said to come back in `seconds`:
    every worker sends nothing more on the configuration until then. Only a configuration
    with limits is paced (the pause is read where a slot is taken); without limits, the
    refused request alone waits. A store that does not answer leaves it at that request."""
    if seconds <= 0 or not has_limits(configuration):
        return
    held = backend()
    try:
        held.pace(configuration.pk, seconds)
    except held.unreachable as error:
        logger.warning("Could not pause %s for every worker (%s)", configuration.name, error)
    else:
        logger.info("%s refused for its rate limit: paused %.1f s", configuration.name, seconds)


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
