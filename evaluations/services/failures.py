"""Failing a conversation: which side failed, whether retrying can help, the failed state.

A leaf of the evaluation services (it imports only models and claims), so the batch engine,
the per-conversation path and the reaper all fail conversations the same way without importing
the processing module that drives them.
"""

from typing import TypeVar

from django.db.models import F, Model
from django.utils import timezone

from core.exceptions import ApplicationError

from ..models import Conversation, ConversationStatus, EvaluationRun, FailureKind
from .claims import Claim, ClaimLost, claim_fence

UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)
M = TypeVar("M", bound=Model)


class ConversationFailure(ApplicationError):
    """A conversation could not be completed, and why (`FailureKind`)."""

    def __init__(self, message: str, *, kind: str, retryable: bool = False) -> None:
        super().__init__(message, extra={"failure_kind": kind})
        self.kind = kind
        # A transient endpoint error stays transient: the task retries it before failing.
        self.retryable = retryable


def is_permanent(error: BaseException) -> bool:
    """Whether retrying cannot help: an ApplicationError not marked retryable."""
    return isinstance(error, ApplicationError) and not getattr(error, "retryable", False)


def failure_kind_of(error: BaseException) -> str:
    """Which side failed, for the failure counts beside every pass rate."""
    kind = getattr(error, "kind", None)
    if kind:
        return kind
    if type(error).__name__ in ("SoftTimeLimitExceeded", "TimeLimitExceeded"):
        return FailureKind.TIMEOUT
    return FailureKind.OTHER


def work_item_mark_failed(
    model: type[M], *, pk: int, error: str, claim: Claim | None = None, **fields: object
) -> tuple[M, bool]:
    """Fail an unfinished work item of a run (a conversation, a rubric reply) under its claim's
    fence when one is given: its status, error (cut to 5,000 characters), no lease, and
    `fields`. Returns the item and whether this call failed it (False once it had finished, or
    when another delivery holds the claim)."""
    try:
        with claim_fence(claim):
            item = model.objects.select_for_update().get(pk=pk)
            if item.status not in UNFINISHED:
                return item, False
            values = {"status": ConversationStatus.FAILED, "error": error[:5000]}
            values |= {"lease_expires_at": None, **fields}
            for name, value in values.items():
                setattr(item, name, value)
            item.save(update_fields=[*values, "updated_at"])
            return item, True
    except ClaimLost:
        return model.objects.get(pk=pk), False


def conversation_mark_failed(
    *,
    conversation_id: int,
    error: str,
    kind: str = FailureKind.OTHER,
    claim: Claim | None = None,
) -> Conversation:
    """Fail an unfinished conversation (under its claim's fence when one is given)."""
    conversation, failed = work_item_mark_failed(
        Conversation,
        pk=conversation_id,
        error=error,
        claim=claim,
        failure_kind=kind,
        finished_at=timezone.now(),
    )
    if failed:
        EvaluationRun.objects.filter(pk=conversation.run_id).update(
            conversations_failed=F("conversations_failed") + 1
        )
    return conversation
