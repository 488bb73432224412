"""Driving a batch of work items on the engine loop, with the rules of the per-item task.

A batch holds items of one kind: conversations (`conversations.ConversationWork`: simulate,
check anchors, judge, finalize) or rubric replies (`rubrics.RubricWork`: reply, grade each
counted criterion, score). Per item (database work on the bridge, model calls on the loop):
claim it and load what is stored (for every item starting in the same loop turn at once), run
its steps, flush, close it under the claim. A permanent error fails the item with its reason;
a transient one gives the claim back and sends it again as a one-item batch after the task
backoff, until the task's retries are spent (`inline`: it fails at once, as
`run_process_inline` always did). A lost claim (its lease lapsed and another delivery took it)
stops the item without writing. Every recorded attempt is flushed before its item is marked
done or failed.

In a run that goes by batch (`services.batching`) an ask that may wait is answered from its
collected batch result, or recorded as a batch request and the item parked once every such
ask not waiting on another's answer is recorded (`Parked`).
"""

import asyncio
import logging
from dataclasses import dataclass, field

from django.conf import settings

from core.progress import Progress, progress_ignore
from core.retry import retries_left
from llm.batches import answered_from_batch, batch_reply, collected_sink
from llm.exceptions import LLMError
from llm.plan import chat_steps, structured_steps

from ..models import ConversationStatus
from ..services.batching import batch_item_park
from ..services.claims import Claim, ClaimLost, claim_release, claims_renew, lease_renew_interval
from ..services.failures import is_permanent
from ..services.health import run_note_outcome
from ..services.steps import Ask, Store, Together
from .batched import BatchAsks
from .bridge import Bridge, run_blocking
from .conversations import ConversationWork
from .kinds import Lost, Parked, WorkKind
from .recorder import BatchRecorder
from .rubrics import RubricWork
from .shared import gateway_for_loop

logger = logging.getLogger(__name__)


@dataclass
class BatchReport:
    completed: int = 0
    failed: int = 0
    skipped: int = 0  # finished, claimed live elsewhere, run not running, or claim lost
    parked: int = 0  # waiting for a provider's batch
    retried: list[int] = field(default_factory=list)
    flushes: int = 0

    @property
    def processed(self) -> int:
        return self.completed + self.failed


class Engine:
    def __init__(
        self,
        bridge: Bridge,
        kind: type[WorkKind],
        *,
        worker: str,
        inline: bool,
        retries: int,
    ) -> None:
        self.bridge = bridge
        self.worker = worker
        self.inline = inline
        self.retries = retries
        self.recorder = BatchRecorder(bridge)
        self.gateway = gateway_for_loop(bridge.loop)
        self.kind = kind(bridge)
        self.claims: dict[int, Claim] = {}
        self.report = BatchReport()
        self._loads: list[tuple[int, asyncio.Future]] = []
        self.batch = BatchAsks()

    async def load(self, item_id: int):
        """Claim and read the item with every other one starting in this loop turn."""
        future = self.bridge.loop.create_future()
        if not self._loads:
            self.bridge.loop.call_soon(lambda: asyncio.ensure_future(self._load_waiting()))
        self._loads.append((item_id, future))
        return await future

    async def _load_waiting(self) -> None:
        waiting, self._loads = self._loads, []

        def load():
            found = self.kind.load([pk for pk, _f in waiting], self.worker)
            claims = [one.claim for one in found if one is not None and one.claim is not None]
            self.batch.load(claims)
            return found

        try:
            loaded = await self.bridge.run(load)
        except Exception as error:  # noqa: BLE001 - each item raises it
            for _pk, future in waiting:
                future.done() or future.set_exception(error)
            return
        for (_pk, future), one in zip(waiting, loaded, strict=True):
            future.done() or future.set_result(one)

    async def drive(self, steps, claim: Claim | None, may_hit: bool):
        """Run an item's steps: gateway calls on the loop, rows to the recorder."""
        reply = error = None
        while True:
            if self.recorder.is_lost(claim):
                raise Lost
            try:
                step = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply = error = None
            if isinstance(step, Store):
                reply = self.recorder.store(step, claim)
                continue
            if isinstance(step, Together):
                reply, error = await self._together(step, claim, may_hit)
                continue
            if not isinstance(step, Ask):  # pragma: no cover - a programming error
                raise TypeError(f"Unknown step {step!r}")
            try:
                reply = await self._ask(step, claim, may_hit)
            except LLMError as exc:
                error = exc

    async def _ask(self, step: Ask, claim: Claim | None, may_hit: bool):
        """A gateway call on the loop; in batch mode, from the batch or parked for one."""
        answer = await self.batch.answer(
            step, claim, may_hit=may_hit, cached=self.recorder.cache_lookup
        )
        sink = (
            self.recorder.sink
            if answer is None
            else collected_sink(self.recorder.sink, answer.logged_call_id)
        )
        options = dict(
            configuration=step.configuration,
            messages=step.messages,
            role=step.role,
            purpose=step.purpose,
            seed=step.seed,
            # A batch's answer is paid for: it is taken, not a cached reply.
            may_hit=may_hit and answer is None,
            sink=sink,
        )
        call = (
            structured_steps(schema=step.schema, **options)
            if step.schema is not None
            else chat_steps(**options, params=step.params)
        )
        if answer is not None:
            call = answered_from_batch(call, batch_reply(answer))
        return await self.gateway.drive(call, self.recorder)

    async def _together(self, step: Together, claim: Claim | None, may_hit: bool):
        """Drive the sequences at once; (their results, None), or (None, the first error)."""
        outcomes = await asyncio.gather(
            *(self.drive(steps, claim, may_hit) for steps in step.steps), return_exceptions=True
        )
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        # A lost claim or a cancelled batch stops the whole item; any other error belongs to
        # its sequence, and the generator that yielded them decides what it means.
        stops = [e for e in errors if isinstance(e, Lost | ClaimLost | asyncio.CancelledError)]
        # Parked only once every sequence has recorded what it asks of the batch.
        stops += [e for e in errors if isinstance(e, Parked)]
        if stops:
            raise stops[0]
        return (None, errors[0]) if errors else (outcomes, None)

    async def item(self, item_id: int):
        loaded = await self.load(item_id)
        if loaded is None:
            self.report.skipped += 1
            return None
        if loaded.finished is not None:
            self.report.failed += loaded.finished.status == ConversationStatus.FAILED
            return loaded.finished
        claim = loaded.claim
        self.claims[claim.pk] = claim
        try:
            with self.kind.attribution(loaded):
                result = await self.kind.work(self, loaded)
        except (Lost, ClaimLost):
            logger.info("%s was taken over by another delivery", claim.work_item)
            self.report.skipped += 1
            return None
        except Parked:
            return await self._park(claim)
        except Exception as error:  # noqa: BLE001 - decided like the per-item task
            return await self._failed(loaded, error)
        finally:
            self.claims.pop(claim.pk, None)
        self.report.completed += 1
        return result

    async def _park(self, claim: Claim) -> None:
        """Write what the item stored so far and its batch requests; leave it waiting."""
        asked = self.batch.asked.pop(claim.pk, [])
        try:
            await self.flush_held(claim)
            await self.bridge.run(batch_item_park, claim, asked)
        except (Lost, ClaimLost):
            self.report.skipped += 1
            return None
        self.report.parked += 1
        return None

    async def flush_held(self, claim: Claim) -> None:
        """Return once the item's rows so far are written; raise if its claim was lost."""
        await self.recorder.flush()
        if self.recorder.is_lost(claim):
            raise Lost
        # Rows stored earlier in a batch that was given up: not done without them.
        self.recorder.raise_unwritten(claim)

    async def _failed(self, loaded, error: Exception):
        claim = loaded.claim
        await self.recorder.flush()  # the attempts are in the call log before any verdict
        _ids_of_calls(error)
        retry = not self.inline and retries_left(self.retries)
        if not is_permanent(error) and retry:
            logger.warning("%s will be retried: %s", claim.work_item, error)
            await self.bridge.run(claim_release, claim)
            await self.bridge.run(
                lambda: run_note_outcome(
                    run_id=claim.run_id, target_id=loaded.target_id, error=error
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

        def fail():
            failed = self.kind.mark_failed(claim, message, error)
            run_note_outcome(run_id=claim.run_id, target_id=loaded.target_id, error=error)
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
    kind: type[WorkKind],
    ids: list[int],
    *,
    worker: str,
    inline: bool,
    retries: int,
    on_progress: Progress,
) -> BatchReport:
    engine = Engine(bridge, kind, worker=worker, inline=inline, retries=retries)
    engine.gateway.bind(bridge.run)
    engine.recorder.start()
    background = [
        asyncio.ensure_future(engine.heartbeat()),
        asyncio.ensure_future(engine.maintain_permits()),
    ]
    limit = asyncio.Semaphore(max(1, settings.ENGINE_CONCURRENCY))
    total = len(ids)
    done = 0

    async def one(item_id: int) -> None:
        nonlocal done
        async with limit:
            await engine.item(item_id)
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


def _process(
    kind: type[WorkKind],
    ids: list[int],
    *,
    worker: str,
    inline: bool,
    retries: int,
    on_progress: Progress,
) -> BatchReport:
    return run_blocking(
        lambda bridge: _main(
            bridge,
            kind,
            list(ids),
            worker=worker,
            inline=inline,
            retries=retries,
            on_progress=on_progress,
        )
    )


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
    return _process(
        ConversationWork,
        conversation_ids,
        worker=worker,
        inline=inline,
        retries=retries,
        on_progress=on_progress,
    )


def process_rubric_responses(
    response_ids: list[int],
    *,
    worker: str = "",
    inline: bool = False,
    retries: int = 0,
    on_progress: Progress = progress_ignore,
) -> BatchReport:
    """`process_conversations` for rubric replies: reply, grade, score, many at once."""
    return _process(
        RubricWork,
        response_ids,
        worker=worker,
        inline=inline,
        retries=retries,
        on_progress=on_progress,
    )
