"""The gateway's steps (`llm.plan`) driven on an event loop, for the batch engine.

Each provider keeps its clients of this loop in a session (`ChatProvider.async_session`,
sized to the engine's concurrency); limits come from `llm.permits` pools, or, for
configurations with token limits, a lease per call (`llm.limits.acquire_async`); the call log
and the cache go through the caller's `CallSink`, which buffers rows and writes them in bulk.
"""

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from django.conf import settings

from . import egress_http, limits
from .admission import AdmissionGate
from .attempts import Attempt, AttemptOutcome, Downgrade, Wait
from .exceptions import LLMError
from .limits import has_limits
from .models import LLMCall, LLMResponseCache, ModelConfiguration, PromptText
from .negotiation import structured_mode_downgrade
from .permits import PermitBlocks, PermitPool, RunSync, blocks_for
from .plan import CacheLookup, CacheStore, Steps
from .providers.base import ChatProvider

R = TypeVar("R")


class CallSink(Protocol):
    """Where the engine's call log and cache go (a bulk recorder)."""

    def record(self, call: LLMCall, prompt: PromptText) -> None: ...

    def cache_store(self, step: CacheStore) -> None: ...

    async def cache_lookup(self, key: str) -> LLMResponseCache | None: ...

    async def run_sync(self, fn: Callable[..., R], *args: Any) -> R: ...


class AsyncGateway:
    """The providers' sessions and the permit pools of one event loop."""

    def __init__(self, *, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self._sessions: dict[str, tuple[ChatProvider, Any]] = {}
        self._pools: dict[int, PermitPool] = {}
        # Per configuration with token limits: (max_concurrency, its admission semaphore).
        self._admissions: dict[int, tuple[int, AdmissionGate | None]] = {}
        self._blocks: PermitBlocks | None = None
        # The database threads of the batches running on this loop (the database limits
        # backend writes through whichever is live; a finished batch's thread serves no more).
        self._runners: list[RunSync] = []

    def bind(self, run_sync: RunSync) -> None:
        self._runners.append(run_sync)

    def unbind(self, run_sync: RunSync) -> None:
        self._runners.remove(run_sync)

    async def run_sync(self, fn: Callable[..., R], *args: Any) -> R:
        return await self._runners[-1](fn, *args)

    def session(self, provider: ChatProvider) -> Any:
        """The provider's clients of this loop, made on first use."""
        entry = self._sessions.get(provider.name)
        if entry is None:
            entry = (provider, provider.async_session(concurrency=self.concurrency))
            self._sessions[provider.name] = entry
        return entry[1]

    def pool(self, configuration: ModelConfiguration, sink: CallSink) -> PermitPool:
        pool = self._pools.get(configuration.pk)
        if pool is None:
            if self._blocks is None:
                self._blocks = blocks_for(self.run_sync)
            pool = PermitPool(configuration, self._blocks)
            self._pools[configuration.pk] = pool
        else:
            pool.configuration = configuration  # limits edited since are honoured
        return pool

    async def maintain(self, *, final: bool = False) -> None:
        for pool in list(self._pools.values()):
            await pool.maintain(final=final)

    async def off_loop(self, fn: Callable[..., R], *args: Any) -> R:
        """Run a limits backend's method off the loop: the database backend on the batch's
        database thread, Redis (a blocking client, one per process) on a worker thread."""
        if isinstance(limits.backend(), limits.DatabaseLimits):
            return await self.run_sync(fn, *args)
        return await asyncio.to_thread(fn, *args)

    def admission(self, configuration: ModelConfiguration) -> AdmissionGate | None:
        """At most max_concurrency of this loop's per-call requests of a configuration wait
        for a lease at once (fewer while the provider refuses for rate); the others wait here,
        asleep, instead of polling the store (as a permit pool admits its waiters)."""
        limit = configuration.max_concurrency or 0
        entry = self._admissions.get(configuration.pk)
        if entry is None or entry[0] != limit:  # limits edited since are honoured
            entry = (limit, AdmissionGate(limit) if limit else None)
            self._admissions[configuration.pk] = entry
        return entry[1]

    async def lease(self, step: Attempt) -> limits.Lease:
        """A per-call lease for a configuration with token limits (a block of permits cannot
        carry each request's tokens), as the synchronous gateway takes it."""
        configuration = step.configuration
        need = limits.tokens_needed(configuration, step.request)
        admission = self.admission(configuration)
        if admission is None:
            return await limits.acquire_async(configuration, need, self.off_loop)
        started = time.monotonic()
        try:
            await asyncio.wait_for(admission.acquire(), settings.LLM_LIMIT_MAX_WAIT_SECONDS)
        except TimeoutError:
            raise limits.wait_error(configuration, time.monotonic() - started, None) from None
        try:
            lease = await limits.acquire_async(configuration, need, self.off_loop)
        except BaseException:
            admission.release()
            raise
        lease.waited_seconds = time.monotonic() - started
        lease.on_release = admission.release
        return lease

    async def attempt(self, step: Attempt, sink: CallSink) -> AttemptOutcome:
        provider = step.provider
        configuration = step.configuration
        limited = has_limits(configuration)
        # Token limits are per request: such a configuration takes a lease per call, as the
        # synchronous gateway does; the others share a pool of permits taken in blocks.
        per_call = limited and limits.has_token_limits(configuration)
        pool = self.pool(configuration, sink) if limited and not per_call else None
        member, lease, waited = None, None, 0.0
        try:
            if per_call:
                lease = await self.lease(step)
                waited = lease.waited_seconds
            elif pool is not None:
                member, waited = await pool.acquire()
        except LLMError as exc:
            return AttemptOutcome(limit_error=exc)
        try:
            started = time.monotonic()
            try:
                # Journaled as sent as its bytes leave: not while it waits for its
                # slot or a connection, and never if it gets none.
                with egress_http.on_sent(step.sending):
                    reply = await provider.send_async(step.request, session=self.session(provider))
            except Exception as exc:  # noqa: BLE001 - the provider classifies what its client raised
                return AttemptOutcome(
                    error=exc,
                    latency_ms=(time.monotonic() - started) * 1000,
                    limit_wait_ms=int(waited * 1000),
                )
            if pool is not None:
                pool.succeeded()
            elif per_call and (gate := self.admission(configuration)) is not None:
                gate.succeeded()
            pause = limits.pause_after(reply, lease.reserved if lease else limits.Tokens())
            if pool is not None and pause > 0:
                pool.pause(pause)  # at once here; other processes read it from the store
            if lease is not None or pause > 0:
                await self.off_loop(
                    functools.partial(
                        limits.settle, configuration=configuration, held=limits.backend()
                    ),
                    lease,
                    reply,
                )
        finally:
            if pool is not None and member is not None:
                pool.release(member)
            if lease is not None:
                try:
                    await self.off_loop(limits.release, lease)
                finally:
                    if lease.on_release is not None:
                        lease.on_release()
        return AttemptOutcome(
            reply=reply,
            latency_ms=(time.monotonic() - started) * 1000,
            limit_wait_ms=int(waited * 1000),
        )

    async def drive(self, steps: Steps, sink: CallSink) -> Any:
        """Run a gateway call's steps (`llm.plan`) on this loop."""
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value
            if isinstance(step, Attempt):
                reply = await self.attempt(step, sink)
            elif isinstance(step, Wait):
                if step.pace is not None:
                    pool = self._pools.get(step.pace.pk)
                    if pool is not None:
                        pool.pause(step.seconds)  # at once here; other processes via the store
                        pool.backoff()
                    gate = self._admissions.get(step.pace.pk, (0, None))[1]
                    if gate is not None:
                        gate.backoff()
                    await self.off_loop(limits.pace_refused, step.pace, step.seconds)
                await asyncio.sleep(step.seconds)
                reply = None
            elif isinstance(step, CacheLookup):
                reply = await sink.cache_lookup(step.key)
            elif isinstance(step, CacheStore):
                sink.cache_store(step)
                reply = None
            elif isinstance(step, Downgrade):
                await sink.run_sync(
                    functools.partial(
                        structured_mode_downgrade,
                        configuration=step.configuration,
                        from_mode=step.from_mode,
                        to_mode=step.to_mode,
                        reason=step.reason,
                    )
                )
                reply = None
            else:  # pragma: no cover - a programming error
                raise TypeError(f"Unknown gateway step {step!r}")

    async def close(self) -> None:
        await self.maintain(final=True)
        for provider, session in self._sessions.values():
            await provider.close_session(session)
        self._sessions.clear()
