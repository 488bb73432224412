"""Request limits for the batch engine: permits taken in blocks, not one round trip per call.

A process driving hundreds of requests keeps, per configuration with limits, a `PermitPool`.
When a request finds no idle permit the pool asks the shared backend for as many permits as
there are waiters, in one round trip; permits are members of the same Redis sorted set (or
`RequestLease` rows) that `llm.limits` uses per call, so the sync gateway, the engine and every
process on every host count against one `max_concurrency`. Held permits are renewed in one
round trip every third of their lifetime (a killed process's permits lapse after
`limits.permit_lease_seconds()`), and idle ones are handed back at every maintenance tick so other
processes can take them. With `requests_per_minute`, each permit is good for one request start
(the rate window counts starts); without it, a held permit is reused by the next request.
The blocks come from `llm.permit_blocks`.
"""

import asyncio
import contextlib
import logging
import random
import time
from collections import deque

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from . import limits
from .admission import AdmissionGate
from .exceptions import LLMError
from .models import ModelConfiguration
from .permit_blocks import DatabaseBlocks, PermitBlocks, RedisBlocks, RunSync, blocks_for

__all__ = [
    "DatabaseBlocks",
    "PermitBlocks",
    "PermitPool",
    "RedisBlocks",
    "RunSync",
    "blocks_for",
]


logger = logging.getLogger(__name__)
MAINTENANCE_SECONDS = 0.1
POLL_SECONDS = 0.01
# After the backend failed to answer, waiters ask again this often (not every poll): a store
# that is down is tried a few times a second, and its return is noticed within this time.
UNREACHABLE_RETRY_SECONDS = 0.5


class PermitPool:
    """The permits this process holds for one configuration, shared by its event loop."""

    def __init__(self, configuration: ModelConfiguration, blocks: PermitBlocks) -> None:
        self.configuration = configuration
        self.blocks = blocks
        self.single_use = bool(configuration.requests_per_minute)
        self.idle: list[str] = []
        self.busy: set[str] = set()
        self.spent: list[str] = []  # single-use permits to hand back
        self._unreturned: list[str] = []  # handed back while the store did not answer
        self.waiters: deque[asyncio.Future] = deque()
        self._fetching = False
        self._unreachable_until = 0.0  # no fetch before this (monotonic) time
        self._unreachable_since: float | None = None
        self._renewed = time.monotonic()
        # No request leaves before this (monotonic) time: a pause the provider asked for, seen
        # here (`pause`) or by another process (read at every maintenance tick). Permits held
        # here are reused without asking the store, so the store's pause alone would not stop
        # them.
        self.paused_until = 0.0
        # At most max_concurrency requests of this process wait for a permit at once; the rest
        # wait their turn here, asleep: every waiter polls the backend, and a thousand waiters
        # (the grading calls of many rubric replies on one judge) polling every few
        # milliseconds would spend the process's CPU on wake-ups.
        # Fewer while the provider refuses for its rate limit (`llm.admission`).
        self._admission: AdmissionGate | None = None
        self._admission_limit = -1
        self._admitted: dict[str, AdmissionGate] = {}
        self._queued = 0  # requests waiting to be admitted

    def _admission_for_limit(self) -> AdmissionGate | None:
        limit = self.configuration.max_concurrency or 0
        if limit != self._admission_limit:  # limits edited since are honoured
            self._admission_limit = limit
            self._admission = AdmissionGate(limit) if limit else None
        return self._admission

    def backoff(self) -> None:
        """The provider refused a request for its rate limit: admit fewer at once."""
        if self._admission is not None:
            self._admission.backoff()

    def succeeded(self) -> None:
        """A request was answered: admit more again, up to max_concurrency."""
        if self._admission is not None:
            self._admission.succeeded()

    def _limit_error(self, started: float) -> LLMError:
        return LLMError(
            _(
                "Waited %(seconds).0f s for a request slot on "
                "%(configuration_name)r (limits: %(concurrency)s at once, "
                "%(per_minute)s per minute)."
            )
            % {
                "seconds": time.monotonic() - started,
                "configuration_name": self.configuration.name,
                "concurrency": self.configuration.max_concurrency or pgettext("no limit", "no"),
                "per_minute": self.configuration.requests_per_minute or pgettext("no limit", "no"),
            },
            retryable=True,
        )

    async def acquire(self) -> tuple[str, float]:
        """A permit and the seconds waited for it; a retryable LLMError after the limit wait."""
        started = time.monotonic()
        deadline = started + settings.LLM_LIMIT_MAX_WAIT_SECONDS
        admission = self._admission_for_limit()
        if admission is not None:
            self._queued += 1
            try:
                await asyncio.wait_for(admission.acquire(), deadline - started)
            except TimeoutError:
                raise self._limit_error(started) from None
            finally:
                self._queued -= 1
        try:
            member = await self._permit(started, deadline)
        except BaseException:
            if admission is not None:
                admission.release()
            raise
        if admission is not None:
            self._admitted[member] = admission
        pause = self.paused_until - time.monotonic()
        if pause > 0:
            if time.monotonic() + pause > deadline:
                self.release(member)
                raise self._limit_error(started)
            await asyncio.sleep(pause)
        return member, time.monotonic() - started

    def pause(self, seconds: float) -> None:
        """Send nothing more from this process for `seconds` (a longer pause stays)."""
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    async def _permit(self, started: float, deadline: float) -> str:
        if self.idle and not self.waiters:
            member = self.idle.pop()
            self.busy.add(member)
            return member
        future = asyncio.get_running_loop().create_future()
        self.waiters.append(future)
        try:
            while not future.done():
                if not self._fetching and time.monotonic() >= self._unreachable_until:
                    await self._fetch()
                if future.done():
                    break
                if time.monotonic() > deadline:
                    raise self._limit_error(started)
                # Someone else is fetching, or nothing was free: wait for a release or poll.
                with _suppress_timeout():
                    await asyncio.wait_for(
                        asyncio.shield(future),
                        POLL_SECONDS * random.uniform(1, 2),  # noqa: S311
                    )
        except BaseException:
            # A waiter that leaves (cancelled, out of time) must not stay in the queue: a later
            # fetch would hand it a permit nobody uses, renews or returns.
            self._abandon(future)
            raise
        member = future.result()
        self.busy.add(member)
        return member

    def _abandon(self, future: asyncio.Future) -> None:
        with contextlib.suppress(ValueError):
            self.waiters.remove(future)
        if future.done() and not future.cancelled():
            # Handed a permit on the way out: it goes to the next waiter, or back at maintenance.
            member = future.result()
            if not self._hand_out(member):
                self.idle.append(member)
        else:
            future.cancel()

    async def _fetch(self) -> None:
        self._fetching = True
        try:
            want = sum(1 for w in self.waiters if not w.done())
            if want:
                if self._unreachable_since is not None:
                    await self._recount()
                taken = await self.blocks.take(self.configuration, want)
                self._store_back()
                for member in taken:
                    # Waiters gone meanwhile leave the permit idle, given back at maintenance.
                    if not self._hand_out(member):
                        self.idle.append(member)
        except self.blocks.unreachable as error:
            # Waiters keep waiting (within their limit wait) and ask again shortly: the store
            # restarting is a pause, not a failure of every request in flight.
            self._unreachable_until = time.monotonic() + UNREACHABLE_RETRY_SECONDS
            self._store_down(error)
        finally:
            self._fetching = False

    async def _recount(self) -> bool:
        """Renew the permits in use here; after an outage the store may have restarted empty,
        and they count again (before any more are taken). True if the store was asked."""
        members = [*self.busy, *self.idle]
        await self.blocks.renew(self.configuration.pk, members)
        self._renewed = time.monotonic()
        return bool(members)

    def _store_back(self) -> None:
        if self._unreachable_since is not None:
            logger.warning(
                "The request limits store answers again: requests to %r resume after %.1f s",
                self.configuration.name,
                time.monotonic() - self._unreachable_since,
            )
            self._unreachable_since = None

    def _store_down(self, error: BaseException) -> None:
        if self._unreachable_since is None:
            self._unreachable_since = time.monotonic()
            logger.warning(
                "The request limits store did not answer (%s); requests to %r wait for it",
                error,
                self.configuration.name,
            )

    def _hand_out(self, member: str) -> bool:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(member)
                return True
        return False

    def release(self, member: str) -> None:
        self.busy.discard(member)
        admission = self._admitted.pop(member, None)
        if admission is not None:
            admission.release()
        if self.single_use:
            self.spent.append(member)
        elif not self._hand_out(member):
            self.idle.append(member)

    async def maintain(self, *, final: bool = False) -> None:
        """Hand back idle and spent permits; renew held ones once a third of their life passed.

        While the store does not answer, what was to be handed back is kept for the next tick
        (a store that restarted empty ignores it) and renewal is tried again at the next tick.
        """
        back, self.spent = self.spent, []
        # Idle permits stay while requests wait for them, admitted or not.
        if not (self.waiters or self._queued) or final:
            back += self.idle
            self.idle = []
        back += self._unreturned
        self._unreturned = []
        try:
            await self.blocks.give_back(self.configuration.pk, back)
        except self.blocks.unreachable as error:
            self._unreturned = back
            self._store_down(error)
            return
        asked = bool(back)
        try:
            self.pause(await self.blocks.paused_for(self.configuration.pk))
        except self.blocks.unreachable as error:
            self._store_down(error)
            return
        due = time.monotonic() - self._renewed > limits.permit_lease_seconds() / 3
        if due or self._unreachable_since is not None:
            try:
                asked = await self._recount() or asked
            except self.blocks.unreachable as error:
                self._store_down(error)
                return
        if asked:
            self._store_back()


class _suppress_timeout:  # noqa: N801 - used as a statement
    def __enter__(self) -> "_suppress_timeout":
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        return kind is not None and issubclass(kind, asyncio.TimeoutError)
