"""Writing the engine's results in bulk: call log, prompts, cache, turns, judgments, coverage.

Rows are buffered on the loop and written by one job on the database thread every
ENGINE_FLUSH_SECONDS (sooner when ENGINE_FLUSH_ROWS are waiting, or when a conversation asks
before it is marked done), in one transaction: prompt texts and cache entries with ON
CONFLICT DO NOTHING, the call log with one multi-row INSERT, then the turns, judgments and
anchor coverage rows, each only if its claim still holds, checked and renewed for all of them
at once (`claims_renew`, which locks the items' rows until commit: the fence of `claim_fence`).
Rows of a lost claim are dropped and their conversation stops; unique keys make a
redelivered batch's rows no-ops, and a batch written again after a failed commit (which the
server may have applied) changes nothing it already stored. A batch that cannot be written at
all is given up with its rows, and every conversation that had rows in it learns so at its
next store or flush: it never ends done without them, and nothing it stores after them is
written either (its stored rows stay a prefix of what it made: a transcript is never stored
with a turn missing in its middle). Cache lookups are batched the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import close_old_connections, transaction

from llm.bulk import cache_entries_store_bulk, calls_already_stored, calls_record_bulk
from llm.cache import cache_lookup_bulk
from llm.plan import CacheStore

from ..services.claims import Claim, claims_renew
from ..services.health import run_note_journal_failure
from ..services.steps import Store
from .bridge import Bridge
from .journal import Journal

if TYPE_CHECKING:
    from llm.models import LLMCall, LLMResponseCache, PromptText

logger = logging.getLogger(__name__)
WRITE_ATTEMPTS = 3  # a write that fails this many times in a row fails the conversations


class _Batch:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.calls: list[LLMCall] = []
        self.prompts: dict[str, PromptText] = {}
        self.cache: dict[str, CacheStore] = {}
        self.stores: list[tuple[Store, Claim | None]] = []
        self.lookups: dict[str, list[asyncio.Future]] = defaultdict(list)
        self.done = loop.create_future()

    @property
    def size(self) -> int:
        return len(self.calls) + len(self.stores) + len(self.lookups)

    def absorb(self, failed: _Batch) -> None:
        """Take over a batch whose write failed: its rows go first, its waiters wait on us."""
        self.calls[:0] = failed.calls
        self.prompts = {**failed.prompts, **self.prompts}
        self.cache = {**failed.cache, **self.cache}
        self.stores[:0] = failed.stores
        for key, futures in failed.lookups.items():
            self.lookups[key][:0] = futures
        done = failed.done

        def settle(ours: asyncio.Future) -> None:
            if done.done():
                return
            if ours.exception() is None:
                done.set_result(None)
                return
            done.set_exception(ours.exception())
            # A waiter still gets it; a batch nobody waited for must not log it when collected
            # (on Python 3.11 that log, from a collection inside the compiler, broke a parse).
            done.exception()

        self.done.add_done_callback(settle)


class _Sink:
    """The `llm.recording` sink of the engine's calls: told before and after each attempt."""

    def __init__(self, recorder: BatchRecorder) -> None:
        self.recorder = recorder

    def __call__(self, call: LLMCall, prompt: PromptText) -> None:
        self.recorder.record(call, prompt)

    def sending(self, call: LLMCall, prompt: PromptText) -> None:
        """An attempt about to leave: journaled, so a crash leaves it "outcome unknown"."""
        self.recorder.journal.write("sent", call, prompt)


class BatchRecorder:
    """The engine's `llm.aio.CallSink`, and the fenced writer of conversation rows."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.loop = bridge.loop
        self.batch = _Batch(self.loop)
        self.lost: set[tuple[int, int]] = set()  # (pk, token) of claims found lost
        # (pk, token) of claims whose rows were in a batch given up, with the reason: nothing
        # more of theirs is written (a later turn stored after a lost one would leave a gap
        # the next delivery resumes after).
        self.unwritten: dict[tuple[int, int], Exception] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.flushes = 0
        self._failed_writes = 0
        self.journal = Journal()
        self._journal_noted: set[int] = set()  # runs told that this batch's journal failed
        self.sink = _Sink(self)
        self._gave_up = False

    # --- CallSink ---------------------------------------------------------------------------
    def record(self, call: LLMCall, prompt: PromptText) -> None:
        # The row joins the batch first: the journal guards it, and never loses it.
        self.batch.calls.append(call)
        self.batch.prompts.setdefault(prompt.sha256, prompt)
        self.journal.write("done", call, prompt)
        self._nudge()

    def cache_store(self, step: CacheStore) -> None:
        self.batch.cache[step.key] = step

    async def cache_lookup(self, key: str) -> LLMResponseCache | None:
        future = self.loop.create_future()
        self.batch.lookups[key].append(future)
        self._wake.set()
        return await future

    async def run_sync(self, fn, *args):
        return await self.bridge.run(fn, *args)

    # --- conversation rows ------------------------------------------------------------------
    def store(self, step: Store, claim: Claim | None) -> list:
        """Queue rows for the next flush; the generator goes on with them at once. Raises
        why, when rows this claim stored earlier were given up."""
        self.raise_unwritten(claim)
        self.batch.stores.append((step, claim))
        self._nudge()
        return step.rows

    def is_lost(self, claim: Claim | None) -> bool:
        return claim is not None and (claim.pk, claim.token) in self.lost

    def raise_unwritten(self, claim: Claim | None) -> None:
        """Raise why rows of this claim were given up, if any were (every time: the claim
        writes nothing more; its next delivery holds another token)."""
        if claim is not None:
            error = self.unwritten.get((claim.pk, claim.token))
            if error is not None:
                raise error

    # --- flushing ---------------------------------------------------------------------------
    def _nudge(self) -> None:
        if self.batch.size >= settings.ENGINE_FLUSH_ROWS:
            self._wake.set()

    async def flush(self) -> None:
        """Return once everything recorded so far is written (raises what the write raised)."""
        done = self.batch.done
        self._wake.set()
        await asyncio.shield(done)

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        try:
            await self.flush()
        except BaseException:
            self.journal.close(written=False)  # replayed by the next batch or the reaper
            raise
        # A batch given up lost rows the journal still holds: the file is replayed.
        self.journal.close(written=not self._gave_up)
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), settings.ENGINE_FLUSH_SECONDS)
            self._wake.clear()
            batch, self.batch = self.batch, _Batch(self.loop)
            if batch.size == 0:
                batch.done.set_result(None)
                continue
            unnoted = self._journal_unnoted(batch)
            try:
                lost, found = await self.bridge.run(
                    self._write, batch, self._failed_writes > 0, self._journal_note(unnoted)
                )
            except Exception as error:  # noqa: BLE001 - retried, then handed to every waiter
                self._failed_writes += 1
                logger.warning("Recording a batch failed (%s): %s", self._failed_writes, error)
                await self.bridge.run(close_old_connections)
                if self._failed_writes < WRITE_ATTEMPTS:
                    # Nothing recorded may be dropped: the rows wait for the next flush, and
                    # whoever waits for them learns the outcome of that one.
                    self.batch.absorb(batch)
                    self._wake.set()
                    continue
                self._failed_writes = 0
                self._gave_up = True
                for _step, claim in batch.stores:
                    if claim is not None:
                        self.unwritten[(claim.pk, claim.token)] = error
                # Their rows queued since this batch was taken would follow a gap: dropped.
                self.batch.stores = [
                    (step, claim)
                    for step, claim in self.batch.stores
                    if claim is None or (claim.pk, claim.token) not in self.unwritten
                ]
                for futures in batch.lookups.values():
                    for future in futures:
                        future.done() or future.set_exception(error)
                batch.done.set_exception(error)
                batch.done.exception()  # a batch nobody waited for must not warn
                continue
            self._failed_writes = 0
            self._journal_noted.update(unnoted)
            self.flushes += 1
            self.lost.update(lost)
            for key, futures in batch.lookups.items():
                for future in futures:
                    future.done() or future.set_result(found.get(key))
            batch.done.set_result(None)

    def _journal_unnoted(self, batch: _Batch) -> set[int]:
        """Runs with calls in this batch not yet told that the journal stopped."""
        if self.journal.failure is None:
            return set()
        return {call.run_id for call in batch.calls if call.run_id} - self._journal_noted

    def _journal_note(self, run_ids: set[int]) -> dict | None:
        if not run_ids or self.journal.failed_at is None:
            return None
        return {
            "run_ids": run_ids,
            "reason": self.journal.failure_reason,
            "at": self.journal.failed_at,
        }

    @staticmethod
    def _write(
        batch: _Batch, again: bool = False, journal_note: dict | None = None
    ) -> tuple[set[tuple[int, int]], dict]:
        """One transaction on the database thread: everything the batch holds, and
        (`journal_note`) the runs of its calls told that they were recorded without the journal."""
        found = {}
        if again and batch.calls:
            # Said, because an operator reading "failed" should know whether it had applied.
            stored = calls_already_stored(calls=batch.calls)
            logger.warning(
                "Writing a batch again: %s of its %s attempts were already stored%s",
                stored,
                len(batch.calls),
                # Not necessarily the last failure: a failed batch is merged into the next one.
                " (a commit that reported failure had applied)" if stored else "",
            )
        with transaction.atomic():
            calls_record_bulk(calls=batch.calls, prompts=batch.prompts.values())
            cache_entries_store_bulk(entries=batch.cache.values())
            lost = _write_rows(batch.stores)
            if journal_note is not None:
                run_note_journal_failure(**journal_note)
        if batch.lookups:
            found = cache_lookup_bulk(keys=batch.lookups.keys())
        return lost, found


def _write_rows(stores: list[tuple[Store, Claim | None]]) -> set[tuple[int, int]]:
    claims = {(c.pk, c.token): c for _s, c in stores if c is not None}
    by_model: dict[type, list[Claim]] = defaultdict(list)
    for claim in claims.values():
        by_model[claim.model].append(claim)
    lost: set[tuple[int, int]] = set()
    for held in by_model.values():
        lost.update((c.pk, c.token) for c in claims_renew(held))
    rows: dict[type, list] = defaultdict(list)
    for step, claim in stores:
        if claim is not None and (claim.pk, claim.token) in lost:
            continue
        step.resolve_calls()
        for row in step.rows:
            rows[type(row)].append(row)
    for model, items in rows.items():
        model.objects.bulk_create(items, ignore_conflicts=True)
    return lost
