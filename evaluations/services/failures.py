"""Failing a conversation: which side failed, whether retrying can help, the failed state.

A leaf of the evaluation services (it imports only models and claims), so the batch engine,
the per-conversation path and the reaper all fail conversations the same way without importing
the processing module that drives them.
"""

from django.db.models import F
from django.utils import timezone

from core.exceptions import ApplicationError

from ..models import Conversation, ConversationStatus, EvaluationRun, FailureKind
from .claims import Claim, ClaimLost, claim_fence

UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


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


def conversation_mark_failed(
    *,
    conversation_id: int,
    error: str,
    kind: str = FailureKind.OTHER,
    claim: Claim | None = None,
) -> Conversation:
    """Fail an unfinished conversation (under its claim's fence when one is given)."""
    try:
        with claim_fence(claim):
            conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
            if conversation.status not in UNFINISHED:
                return conversation
            conversation.status = ConversationStatus.FAILED
            conversation.error = error[:5000]
            conversation.failure_kind = kind
            conversation.finished_at = timezone.now()
            conversation.lease_expires_at = None
            conversation.save(
                update_fields=[
                    "status",
                    "error",
                    "failure_kind",
                    "finished_at",
                    "lease_expires_at",
                    "updated_at",
                ]
            )
            EvaluationRun.objects.filter(pk=conversation.run_id).update(
                conversations_failed=F("conversations_failed") + 1
            )
    except ClaimLost:
        conversation = Conversation.objects.get(pk=conversation_id)
    return conversation
