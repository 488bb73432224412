"""Which blind items a rating may still arrive for, and the scenarios they hold back.

Here, beside the adapters, because drawing blind items needs it (`evaluations`' candidates are
conversations not public yet); `review.blindness` says why and for how long.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from evaluations.models import Conversation

from ..models import Assignment, AssignmentStatus, QueueItem, QueueStatus, Rating, RatingQueue
from .base import kinds_with


def held_parts() -> tuple[QuerySet[QueueItem], QuerySet[QueueItem]]:
    """Held blind items as two sets, each found from its own index: items of open queues (few
    queues, their items by queue) and items with a claim outstanding (by assignment status).
    One filter with OR between the two would read every queue item ever drawn, on every page
    request (a release's closed panel holds tens of thousands)."""
    blind = kinds_with("blind")
    in_open_queues = QueueItem.objects.filter(kind__in=blind, queue__status=QueueStatus.OPEN)
    claims = Assignment.objects.filter(status=AssignmentStatus.CLAIMED).values("item_id")
    with_claims = QueueItem.objects.filter(kind__in=blind, pk__in=claims)
    return in_open_queues, with_claims


def blind_items_held() -> QuerySet[QueueItem]:
    """Blind items a rating may still arrive for: open queue, or a claim still outstanding."""
    in_open_queues, with_claims = held_parts()
    return QueueItem.objects.filter(
        Q(pk__in=in_open_queues.values("pk")) | Q(pk__in=with_claims.values("pk"))
    )


def blind_held_scenarios() -> QuerySet[Conversation]:
    """Scenario ids of every held item's conversations (both of a pair): a lazy subquery, for
    `evaluations.visibility`'s public paths (`held=`)."""
    in_open_queues, with_claims = held_parts()
    conversation_ids = (
        in_open_queues.order_by()
        .values("object_id")
        .union(
            in_open_queues.order_by().values("object_id_b"),
            with_claims.order_by().values("object_id"),
            with_claims.order_by().values("object_id_b"),
        )
    )
    return (
        Conversation.objects.filter(pk__in=conversation_ids)
        .order_by()
        .values("scenario_id")
        .distinct()
    )


def unreleased_blind_queues() -> QuerySet[RatingQueue]:
    """Queues of blind kinds whose ratings no public figure counts yet: open, or closed with a
    claim still outstanding. A rater who watched a figure move after their one rating would
    learn the model (and the judge's verdict) of the item they rated blind, so a blind queue's
    ratings reach the figures together, once no rating of it can still arrive."""
    claimed = Assignment.objects.filter(status=AssignmentStatus.CLAIMED).values("queue_id")
    return RatingQueue.objects.filter(kind__in=kinds_with("blind")).filter(
        Q(status=QueueStatus.OPEN) | Q(pk__in=claimed)
    )


def ratings_published(ratings: QuerySet[Rating], *, undone: bool = False) -> QuerySet[Rating]:
    """The ratings figures may count: not undone (unless `undone`, for a stamp that must see
    undoing), and not of a blind queue still taking ratings (`unreleased_blind_queues`)."""
    if not undone:
        ratings = ratings.filter(undone=False)
    return ratings.exclude(queue_id__in=unreleased_blind_queues().values("pk"))


def queue_released(queue: RatingQueue) -> bool:
    """Whether the queue's ratings are counted by figures (always, for a kind rated openly)."""
    return not unreleased_blind_queues().filter(pk=queue.pk).exists()
