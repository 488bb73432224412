"""Driving a batch of conversations on the engine loop, with the rules of the per-item task.

Per conversation (database work on the bridge, model calls on the loop):
claim it (`claim_take`) and load what is stored; simulate from the stored turns, flush, mark
simulated; check anchors; judge the missing repetitions; flush; finalize under the claim.
A permanent error fails the conversation with its reason; a transient one gives the claim
back and sends it again as a one-item batch after the task backoff, until the task's retries
are spent (`inline`: it fails at once, as `run_process_inline` always did). A lost claim (its
lease lapsed and another delivery took it) stops the conversation without writing.
Every recorded attempt is flushed before its conversation is marked done or failed.
"""

import asyncio
import logging
from dataclasses import dataclass, field

from django.conf import settings

from core.progress import Progress, progress_ignore
from core.retry import retries_left
from llm.exceptions import LLMError
from llm.plan import chat_steps, structured_steps

from ..models import Conversation, ConversationStatus
from ..services.anchors import anchor_steps
from ..services.claims import (
    Claim,
    ClaimLost,
    claim_release,
    claims_renew,
    lease_renew_interval,
)
from ..services.closing import conversations_finalize, conversations_mark_simulated
from ..services.failures import conversation_mark_failed, failure_kind_of, is_permanent
from ..services.health import run_note_outcome
from ..services.judging import judge_steps
from ..services.simulation import conversation_attribution, simulate_steps
from ..services.steps import Ask, Store
from .bridge import Bridge, run_blocking
from .coalesce import Coalescer
from .loading import Loaded, conversations_load
from .recorder import BatchRecorder
from .shared import gateway_for_loop

logger = logging.getLogger(__name__)


@dataclass
class BatchReport:
    completed: int = 0
    failed: int = 0
    skipped: int = 0  # finished, claimed live elsewhere, run not running, or claim lost
    retried: list[int] = field(default_factory=list)
    flushes: int = 0

    @property
    def processed(self) -> int:
        return self.completed + self.failed


class _Lost(Exception):
    pass


class Engine:
    def __init__(self, bridge: Bridge, *, worker: str, inline: bool, retries: int) -> None:
        self.bridge = bridge
        self.worker = worker
        self.inline = inline
        self.retries = retries
        self.recorder = BatchRecorder(bridge)
        self.gateway = gateway_for_loop(bridge.loop)
        self.claims: dict[int, Claim] = {}
        # Conversations that end together are closed together (one transaction).
        self.mark_simulated = Coalescer(bridge, conversations_mark_simulated)
        self.finalize = Coalescer(bridge, conversations_finalize)
        self.report = BatchReport()
        self._loads: list[tuple[int, asyncio.Future]] = []

    async def load(self, conversation_id: int) -> Loaded | None:
        """Claim and read the conversation with every other one starting in this loop turn."""
        future = self.bridge.loop.create_future()
        if not self._loads:
            self.bridge.loop.call_soon(lambda: asyncio.ensure_future(self._load_waiting()))
        self._loads.append((conversation_id, future))
        return await future

    async def _load_waiting(self) -> None:
        waiting, self._loads = self._loads, []
        try:
            loaded = await self.bridge.run(
                conversations_load, [pk for pk, _f in waiting], self.worker
            )
        except Exception as error:  # noqa: BLE001 - each conversation raises it
            for _pk, future in waiting:
                future.done() or future.set_exception(error)
            return
        for (_pk, future), one in zip(waiting, loaded, strict=True):
            future.done() or future.set_result(one)

    async def drive(self, steps, claim: Claim | None, may_hit: bool):
        """Run a conversation's steps: gateway calls on the loop, rows to the recorder."""
        reply = error = None
        while True:
            if self.recorder.is_lost(claim):
                raise _Lost
            try:
                step = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply = error = None
            if isinstance(step, Store):
                reply = self.recorder.store(step, claim)
                continue
            if not isinstance(step, Ask):  # pragma: no cover - a programming error
                raise TypeError(f"Unknown conversation step {step!r}")
            options = dict(
                configuration=step.configuration,
                messages=step.messages,
                role=step.role,
                purpose=step.purpose,
                seed=step.seed,
                may_hit=may_hit,
                sink=self.recorder.sink,
            )
            call = (
                structured_steps(schema=step.schema, **options)
                if step.schema is not None
                else chat_steps(**options, params=step.params)
            )
            try:
                reply = await self.gateway.drive(call, self.recorder)
            except LLMError as exc:
                error = exc

    async def conversation(self, conversation_id: int) -> Conversation | None:
        loaded = await self.load(conversation_id)
        if loaded is None:
            self.report.skipped += 1
            return None
        if loaded.finished is not None:
            self.report.failed += loaded.finished.status == ConversationStatus.FAILED
            return loaded.finished
        conversation, claim = loaded.conversation, loaded.claim
        self.claims[claim.pk] = claim
        try:
            with conversation_attribution(conversation, claim):
                result = await self._work(loaded)
        except (_Lost, ClaimLost):
            logger.info("Conversation %s was taken over by another delivery", conversation_id)
            self.report.skipped += 1
            return None
        except Exception as error:  # noqa: BLE001 - decided like the per-item task
            return await self._failed(loaded, error)
        finally:
            self.claims.pop(claim.pk, None)
        self.report.completed += 1
        return result

    async def _work(self, loaded: Loaded) -> Conversation:
        conversation, claim = loaded.conversation, loaded.claim
        turns = loaded.turns
        if conversation.simulated_at is None:
            stop_reason = await self.drive(
                simulate_steps(conversation=conversation, turns=turns), claim, loaded.may_hit
            )
            await self._flush_held(claim)
            await self.mark_simulated.submit((conversation, stop_reason, claim))
        if not loaded.has_coverage:
            await self.drive(anchor_steps(conversation=conversation, turns=turns), claim, True)
        await self.drive(
            judge_steps(conversation=conversation, turns=turns, done=loaded.judged),
            claim,
            loaded.may_hit,
        )
        await self._flush_held(claim)
        return await self.finalize.submit((conversation, claim))

    async def _flush_held(self, claim: Claim) -> None:
        await self.recorder.flush()
        if self.recorder.is_lost(claim):
            raise _Lost
        # Rows stored earlier in a batch that was given up: not done without them.
        self.recorder.raise_unwritten(claim)

    async def _failed(self, loaded: Loaded, error: Exception) -> Conversation | None:
        claim = loaded.claim
        await self.recorder.flush()  # the attempts are in the call log before any verdict
        _ids_of_calls(error)
        retry = not self.inline and retries_left(self.retries)
        if not is_permanent(error) and retry:
            logger.warning("Conversation %s will be retried: %s", claim.pk, error)
            await self.bridge.run(claim_release, claim)
            await self.bridge.run(
                lambda: run_note_outcome(
                    run_id=claim.run_id, target_id=loaded.conversation.target_id, error=error
                )
            )
            self.report.retried.append(claim.pk)
            return None
        if is_permanent(error):
            message = error.message
        elif self.inline:
            message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        else:
            message = f"Gave up after {self.retries + 1} attempts: {error}"

        def fail() -> Conversation:
            failed = conversation_mark_failed(
                conversation_id=claim.pk, error=message, kind=failure_kind_of(error), claim=claim
            )
            run_note_outcome(
                run_id=claim.run_id, target_id=loaded.conversation.target_id, error=error
            )
            return failed

        self.report.failed += 1
        return await self.bridge.run(fail)

    async def heartbeat(self) -> None:
        """Renew every live claim of the batch in one statement, a third of a lease apart."""
        interval = lease_renew_interval()
        while True:
            await asyncio.sleep(interval)
            held = list(self.claims.values())
            if held:
                try:
                    lost = await self.bridge.run(claims_renew, held)
                except Exception:  # noqa: BLE001 - a database blip must not stop the batch
                    logger.warning("Could not renew the leases of a batch")
                    continue
                self.recorder.lost.update((c.pk, c.token) for c in lost)

    async def maintain_permits(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            try:
                await self.gateway.maintain()
            except Exception:  # noqa: BLE001 - the next tick tries again
                logger.warning("Could not return or renew request permits", exc_info=True)


def _ids_of_calls(error: BaseException) -> None:
    """Now that the batch is written, give errors the ids of their recorded attempts."""
    while error is not None:
        calls = getattr(error, "calls", None)
        if calls:
            error.call_ids = [call.pk for call in calls]
        error = error.__cause__


async def _main(
    bridge: Bridge,
    ids: list[int],
    *,
    worker: str,
    inline: bool,
    retries: int,
    on_progress: Progress,
) -> BatchReport:
    engine = Engine(bridge, worker=worker, inline=inline, retries=retries)
    engine.gateway.bind(bridge.run)
    engine.recorder.start()
    background = [
        asyncio.ensure_future(engine.heartbeat()),
        asyncio.ensure_future(engine.maintain_permits()),
    ]
    limit = asyncio.Semaphore(max(1, settings.ENGINE_CONCURRENCY))
    total = len(ids)
    done = 0

    async def one(conversation_id: int) -> None:
        nonlocal done
        async with limit:
            await engine.conversation(conversation_id)
        done += 1
        if on_progress is not progress_ignore:  # no hop to the database thread for nothing
            await bridge.run(on_progress, done, total)

    try:
        await asyncio.gather(*(one(pk) for pk in ids))
        await engine.recorder.stop()
    finally:
        engine.recorder.journal.close(written=False)  # no-op after a clean stop
        for task in background:
            task.cancel()
        await engine.gateway.maintain(final=True)
        engine.gateway.unbind(bridge.run)
    engine.report.flushes = engine.recorder.flushes
    return engine.report


def process_conversations(
    conversation_ids: list[int],
    *,
    worker: str = "",
    inline: bool = False,
    retries: int = 0,
    on_progress: Progress = progress_ignore,
) -> BatchReport:
    """Process the conversations concurrently on this process's engine loop; blocks until done.

    The database work runs in the calling thread (its connection, its transaction).
    `on_progress(done, total)` is called there as each conversation is over (processed,
    failed or skipped): `done` of the `total` given here.
    """
    return run_blocking(
        lambda bridge: _main(
            bridge,
            list(conversation_ids),
            worker=worker,
            inline=inline,
            retries=retries,
            on_progress=on_progress,
        )
    )
