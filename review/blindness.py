"""Which rated conversations must stay out of public view, and for how long.

Items of the kinds below are rated without the model's name (and, for the external panel,
without the judge's verdict); `evaluations.visibility` keeps their scenarios off every public
page, API answer and download while a rating of them may still be given: the queue is open,
or a claim on the item is still outstanding after it closed. Closing the queue (Workspace →
Rating queues → Close) is how a maintainer or researcher releases the hold. Items are drawn
only from conversations that are not public yet (`kinds.evaluations`), so nothing a rater
rates blind was ever readable by them.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from core.pagecache import latest
from evaluations.models import Conversation

from .models import Assignment, AssignmentStatus, ItemKind, QueueItem, QueueStatus, RatingQueue

BLIND_KINDS = (
    ItemKind.CONVERSATION,
    ItemKind.JUDGE_VERDICT,
    ItemKind.EXTERNAL_PANEL,
    ItemKind.SIMULATOR_PAIR,
)


def blind_items_held() -> QuerySet[QueueItem]:
    """Blind items a rating may still arrive for: open queue, or a claim still outstanding."""
    claimed = Assignment.objects.filter(item=OuterRef("pk"), status=AssignmentStatus.CLAIMED)
    return QueueItem.objects.filter(kind__in=BLIND_KINDS).filter(
        Q(queue__status=QueueStatus.OPEN) | Exists(claimed)
    )


def blind_held_scenarios() -> QuerySet[Conversation]:
    """Scenario ids of every held item's conversations (both of a pair): a lazy subquery,
    the answer to the ``BLIND_HOLDS`` event."""
    items = blind_items_held()
    return (
        Conversation.objects.filter(
            Q(pk__in=items.values("object_id")) | Q(pk__in=items.values("object_id_b"))
        )
        .values("scenario_id")
        .distinct()
    )


def blind_holds_stamp_sql() -> str:
    """The page cache's stamp part over held items: which they are (count and id sum of held
    items) and when a queue last changed, so a page never outlives a hold or its release."""
    items = QueueItem._meta.db_table
    queues = RatingQueue._meta.db_table
    assignments = Assignment._meta.db_table
    kinds = ", ".join(f"'{kind.value}'" for kind in BLIND_KINDS)
    return (
        f"(SELECT COUNT(*) || '.' || COALESCE(SUM(i.object_id + i.object_id_b), 0) "  # noqa: S608
        f"|| '.' || (SELECT COUNT(*) || '.' || {latest('updated_at')} FROM {queues}) "
        f"FROM {items} i WHERE i.kind IN ({kinds}) AND ("
        f"EXISTS (SELECT 1 FROM {queues} q WHERE q.id = i.queue_id AND q.status = "
        f"'{QueueStatus.OPEN.value}') OR EXISTS (SELECT 1 FROM {assignments} a "
        f"WHERE a.item_id = i.id AND a.status = '{AssignmentStatus.CLAIMED.value}')))"
    )
