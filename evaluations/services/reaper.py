"""The reaper: what makes a run finish by itself after a worker, broker or database fault.

Run by Celery beat every RUN_REAPER_INTERVAL_SECONDS (`evaluations.tasks.runs_reap`), on any
number of hosts at once (every step is a conditional UPDATE, so two reapers cannot both act):

1. an item whose claim expired (its worker died or hung) goes back to pending and is sent again;
2. a pending item whose message is lost (a broker restart without persistence) is sent again:
   with Redis, one sent over RUN_LOST_MESSAGE_GRACE_SECONDS ago whose id is in no message the
   broker holds, queued or taken by a worker (`services.broker`); whatever the broker, one not
   sent for RUN_REDISPATCH_AFTER_SECONDS. A copy of a message still queued is refused by the
   claim, so a mistake costs a message, never a model call;
3. batch mode (`services.batching`, `llm.batches_reaper`): pending batch requests are submitted,
   submitted batches polled and the results of ended ones written, and items parked for a
   batch whose requests are all answered are sent back to the engine;
4. attempts of unknown outcome sent for the provider to keep are looked up there and settled
   (`llm.reconcile`: reconciled with what it billed, or not billed);
5. a running run with nothing left to do is closed.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from llm.batches_reaper import batches_collect, batches_submit
from llm.reconcile import calls_reconcile

from ..models import ConversationStatus, EvaluationRun, RunStatus
from .batching import batch_items_resume
from .broker import broker_held_ids
from .claims import lease_lapsed
from .processing import WORK_ITEMS, run_check_finished

# At most this many items of one kind are sent per sweep, so one sweep stays short.
REAP_BATCH = 2000


@dataclass(frozen=True)
class ReapReport:
    expired: int = 0
    redispatched: int = 0
    closed: int = 0
    batches_submitted: int = 0
    batches_collected: int = 0
    resumed: int = 0
    reconciled: int = 0
    not_billed: int = 0
    lookup_failed: int = 0


def runs_reap() -> ReapReport:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RUN_REDISPATCH_AFTER_SECONDS)
    expired = redispatched = closed = 0
    held = _held_if_pending()
    for items in WORK_ITEMS:
        model, send, task_names = items.model, items.send, items.tasks
        running = model.objects.filter(run__status=RunStatus.RUNNING)
        lapsed = running.filter(status=ConversationStatus.RUNNING).filter(lease_lapsed(now))
        ids = list(lapsed.values_list("pk", flat=True)[:REAP_BATCH])
        if ids:
            # Conditional on the lease still being expired: a heartbeat that renewed it since
            # the SELECT keeps its item.
            back = model.objects.filter(
                lease_lapsed(now), pk__in=ids, status=ConversationStatus.RUNNING
            )
            ids = list(back.values_list("pk", flat=True))
            back.update(status=ConversationStatus.PENDING, claimed_by="", dispatched_at=now)
            expired += len(ids)
            send(ids)
        pending = running.filter(status=ConversationStatus.PENDING)
        forgotten = pending.filter(Q(dispatched_at__lt=stale) | Q(dispatched_at__isnull=True))
        ids = list(forgotten.values_list("pk", flat=True)[:REAP_BATCH])
        if held is not None and task_names:
            in_broker = set().union(*(held.get(name, set()) for name in task_names))
            settled = now - timedelta(seconds=settings.RUN_LOST_MESSAGE_GRACE_SECONDS)
            sent = pending.filter(dispatched_at__lt=settled).values_list("pk", flat=True)
            lost = [pk for pk in sent[: REAP_BATCH * 10] if pk not in in_broker]
            ids = list(dict.fromkeys([*ids, *lost]))[:REAP_BATCH]
        if ids:
            model.objects.filter(pk__in=ids, status=ConversationStatus.PENDING).update(
                dispatched_at=now
            )
            redispatched += len(ids)
            send(ids)
    submitted = batches_submit()
    collected = batches_collect()
    resumed = batch_items_resume((items.model, items.send) for items in WORK_ITEMS)
    settled = calls_reconcile(now=now)
    for run_id in EvaluationRun.objects.filter(status=RunStatus.RUNNING).values_list(
        "pk", flat=True
    ):
        closed += run_check_finished(run_id=run_id)
    return ReapReport(
        expired=expired,
        redispatched=redispatched,
        closed=closed,
        batches_submitted=submitted,
        batches_collected=collected,
        resumed=resumed,
        reconciled=settled.reconciled,
        not_billed=settled.not_billed,
        lookup_failed=settled.lookup_failed,
    )


def _held_if_pending() -> dict[str, set[int]] | None:
    """Read the broker only when some running run has pending items (most sweeps have none)."""
    running = RunStatus.RUNNING
    if not any(
        items.model.objects.filter(run__status=running, status=ConversationStatus.PENDING).exists()
        for items in WORK_ITEMS
    ):
        return None
    return broker_held_ids(name for items in WORK_ITEMS for name in items.tasks)
