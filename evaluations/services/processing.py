"""Processing a run's conversations: claim, simulate, judge, finalize; failing; closing the run.

Who decides what on failure:
- a permanent error (an ApplicationError that is not retryable: the endpoint refused the
  request, the model kept answering outside the schema) fails the conversation here, with
  its message, so the run can finish and a maintainer can retry it from the run page;
- anything transient (a retryable LLMError once the gateway's own retries are spent, a dropped
  database connection, a time limit) gives the claim back and propagates: the Celery task owns
  the retry policy and fails the conversation only when its retries are spent.
"""

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Model
from django.utils import timezone

from core import events
from core.progress import Progress, progress_ignore
from core.queueing import task_send

from ..engine import process_conversations, process_rubric_responses
from ..events import RunCompleted
from ..models import Conversation, ConversationStatus, EvaluationRun, RubricResponse, RunStatus
from .anchors import conversation_anchors_check
from .claims import ClaimLost, LeaseHeartbeat, claim_release, claim_take
from .failures import UNFINISHED, conversation_mark_failed, failure_kind_of, is_permanent
from .fidelity import conversation_fidelity_check
from .health import run_admits_work, run_note_outcome
from .judging import conversation_finalize, conversation_judge
from .rubric_runs import RUBRIC_TASKS, rubric_responses_send
from .simulation import conversation_simulate

logger = logging.getLogger(__name__)

CONVERSATION_TASKS = (
    "evaluations.tasks.llm_process_batch",
    "evaluations.tasks.llm_process_conversation",
)


def conversation_process(
    *,
    conversation_id: int,
    check_finished: bool = True,
    worker: str = "",
    heartbeat: bool = False,
) -> Conversation | None:
    """Simulate (resuming), judge the missing repetitions, finalize. The task body.

    Returns None when there was nothing to do for this delivery: the conversation is finished,
    claimed live by another worker, its run is not running, or the claim was lost midway.
    `heartbeat` renews the claim's lease from a thread (workers; the inline loop needs none).
    `check_finished=False` leaves closing the run to a caller that processes many
    conversations in a row (`run_process_inline`).
    """
    conversation = Conversation.objects.filter(pk=conversation_id).select_related("run").first()
    if conversation is None:
        return None
    refusal = run_admits_work(run=conversation.run, target_id=conversation.target_id)
    if refusal == "":
        return None
    claim = claim_take(Conversation, pk=conversation_id, worker=worker)
    if claim is None:
        return None
    if refusal is not None:
        # Its target is paused for the run: fail it with the reason rather than call again.
        conversation = conversation_mark_failed(
            conversation_id=conversation_id, error=refusal, claim=claim
        )
        if check_finished:
            run_check_finished(run_id=conversation.run_id)
        return conversation
    try:
        with LeaseHeartbeat(claim) if heartbeat else contextlib.nullcontext():
            conversation_simulate(conversation=conversation, claim=claim)
            conversation_anchors_check(conversation=conversation, claim=claim)
            conversation_fidelity_check(conversation=conversation, claim=claim)
            conversation_judge(conversation=conversation, claim=claim)
            conversation = conversation_finalize(conversation=conversation, claim=claim)
    except ClaimLost:
        logger.info("Conversation %s was taken over by another delivery", conversation_id)
        return None
    except Exception as error:
        if not is_permanent(error):
            claim_release(claim)
            run_note_outcome(run_id=claim.run_id, target_id=conversation.target_id, error=error)
            raise
        conversation = conversation_mark_failed(
            conversation_id=conversation_id,
            error=error.message,
            kind=failure_kind_of(error),
            claim=claim,
        )
        run_note_outcome(run_id=claim.run_id, target_id=conversation.target_id, error=error)
    else:
        run_note_outcome(run_id=claim.run_id, target_id=conversation.target_id, error=None)
    if check_finished:
        run_check_finished(run_id=conversation.run_id)
    return conversation


def conversations_send(conversation_ids: list[int]) -> None:
    """Hand conversations to the batch engine's workers, ENGINE_BATCH_SIZE per task."""
    size = max(1, settings.ENGINE_BATCH_SIZE)
    for start in range(0, len(conversation_ids), size):
        batch = list(conversation_ids[start : start + size])
        task_send("evaluations.tasks.llm_process_batch", batch)


def _offset_progress(progress: Progress, *, start: int, total: int) -> Progress:
    """A batch's progress as progress through all `total` conversations, `start` before it."""
    if progress is progress_ignore:
        return progress_ignore
    return lambda done, _batch_total, stage="": progress(start + done, total, stage)


def run_process_inline(
    *, run_id: int, on_progress: Progress = progress_ignore, no_worker: bool = False
) -> int:
    """Process every unfinished conversation of a running run here, without a worker.

    For the demo seed, tests and `run_evaluation --inline`: the batch engine a worker runs,
    on this thread's database connection, ENGINE_BATCH_SIZE conversations at a time. Stops
    early when the run is paused, cancelled or halted. A transient failure fails the
    conversation at once (there is no task to retry it; `run_retry_failed` can).
    The rubric replies follow the conversations, through the same engine. Returns the number
    of items processed. `on_progress(done, total)` follows every item: `done` of the `total`
    unfinished when the call began, once per item. `no_worker` (the command line): the figures
    of a completed run are derived before this returns instead of queued (`RunCompleted`).
    """
    processed = 0
    ids = [
        (items.process, pk)
        for items in WORK_ITEMS
        for pk in items.model.objects.filter(run_id=run_id, status__in=UNFINISHED)
        .order_by("pk")
        .values_list("pk", flat=True)
    ]
    size = max(1, settings.ENGINE_BATCH_SIZE)
    start = 0
    while start < len(ids):
        # A batch holds items of one kind.
        process = ids[start][0]
        batch = [pk for fn, pk in ids[start : start + size] if fn is process]
        report = process(
            batch,
            inline=True,
            on_progress=_offset_progress(on_progress, start=start, total=len(ids)),
        )
        processed += report.processed
        start += len(batch)
        if not EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
            break
    run_check_finished(run_id=run_id, no_worker=no_worker)
    return processed


def run_check_finished(*, run_id: int, no_worker: bool = False) -> bool:
    """Close a running run once no conversation or rubric reply is pending, running or
    waiting for a provider's batch."""
    models = [items.model for items in WORK_ITEMS]
    open_statuses = (*UNFINISHED, ConversationStatus.WAITING)
    if any(m.objects.filter(run_id=run_id, status__in=open_statuses).exists() for m in models):
        return False
    any_completed = any(
        m.objects.filter(run_id=run_id, status=ConversationStatus.COMPLETED).exists()
        for m in models
    )
    closed = EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.COMPLETED if any_completed else RunStatus.FAILED,
        finished_at=timezone.now(),
    )
    if closed and any_completed:
        # Whoever derives figures from a run (the results app) rebuilds them on this event.
        events.publish(RunCompleted(run_id=run_id, no_worker=no_worker))
    return True


@dataclass(frozen=True)
class WorkItems:
    """One kind of a run's work items: its rows, how they are sent to workers and by which
    tasks (the reaper looks for their ids in the broker), and how a batch is processed here."""

    model: type[Model]
    send: Callable[[list[int]], None]
    tasks: tuple[str, ...]
    process: Callable[..., object]


WORK_ITEMS = (
    WorkItems(Conversation, conversations_send, CONVERSATION_TASKS, process_conversations),
    WorkItems(RubricResponse, rubric_responses_send, RUBRIC_TASKS, process_rubric_responses),
)
