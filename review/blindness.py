"""Which rated conversations must stay out of public view, and for how long.

Items of the kinds below are rated without the model's name (and, for the external panel,
without the judge's verdict); `evaluations.visibility` keeps their scenarios off every public
page, API answer and download while a rating of them may still be given: the queue is open,
or a claim on the item is still outstanding after it closed. Closing the queue (Workspace →
Rating queues → Close) is how a maintainer or researcher releases the hold. Items are drawn
only from conversations that are not public yet (`kinds.evaluations`), so nothing a rater
rates blind was ever readable by them.

The same hold keeps figures from telling what a rater must not learn. Pass rates and judge-only
rates leave held conversations out (counted apart, as "held for blind review"), so a count
differenced against the public listing reveals no held verdict. A blind queue's ratings count
in no figure until no rating of it can still arrive (`ratings_published`): the figures take the
whole queue's verdicts at once when it is released, never one rater's, and an undo is refused
from then on.
"""

from __future__ import annotations

from core.pagecache import latest

from .kinds import kinds_with
from .kinds.holds import (
    blind_held_scenarios,
    blind_items_held,
    queue_released,
    ratings_published,
    unreleased_blind_queues,
)
from .models import Assignment, AssignmentStatus, QueueItem, QueueStatus, RatingQueue

# The kinds whose adapters are rated blind (`KindAdapter.blind`).
BLIND_KINDS = kinds_with("blind")

__all__ = [
    "BLIND_KINDS",
    "blind_held_scenarios",
    "blind_holds_stamp_sql",
    "blind_items_held",
    "queue_released",
    "ratings_published",
    "unreleased_blind_queues",
]


def blind_holds_stamp_sql() -> str:
    """The page cache's stamp part over held items: which they are (count and id sum of held
    items) and when a queue last changed, so a page never outlives a hold or its release.
    Held items are read as the union of `kinds.holds.held_parts`' two indexed sets (see there)."""
    items = QueueItem._meta.db_table
    queues = RatingQueue._meta.db_table
    assignments = Assignment._meta.db_table
    kinds = ", ".join(f"'{kind}'" for kind in BLIND_KINDS)
    return (
        f"(SELECT COUNT(*) || '.' || COALESCE(SUM(h.object_id + h.object_id_b), 0) "  # noqa: S608
        f"|| '.' || (SELECT COUNT(*) || '.' || {latest('updated_at')} FROM {queues}) FROM ("
        f"SELECT i.id, i.object_id, i.object_id_b FROM {items} i JOIN {queues} q "
        f"ON q.id = i.queue_id WHERE q.status = '{QueueStatus.OPEN.value}' "
        f"AND i.kind IN ({kinds}) UNION "
        f"SELECT i.id, i.object_id, i.object_id_b FROM {items} i JOIN {assignments} a "
        f"ON a.item_id = i.id WHERE a.status = '{AssignmentStatus.CLAIMED.value}' "
        f"AND i.kind IN ({kinds})) h)"
    )
