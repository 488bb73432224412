"""Claiming items, submitting, skipping and undoing ratings.

Counters on `QueueItem` (`ratings_done`, `claims_open`) decide who may still take an item; the
database refuses `ratings_done + claims_open > required` (CHECK constraint), and every change to
them happens with the item row locked. On PostgreSQL simultaneous claimers skip rows another
claimer has locked (SELECT ... FOR UPDATE SKIP LOCKED) instead of queueing behind it; on SQLite
the IMMEDIATE transaction mode set in settings serialises writers, which gives the same
guarantee with less concurrency.
"""

from collections import Counter
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core import events
from core.exceptions import ApplicationError
from core.roles import Role, user_has_role
from core.validators import control_character_message, text_length_problem, text_max_length

from ..events import BlindHoldChanged, RatingsChanged
from ..kinds import adapter_for, kinds_with
from ..kinds.holds import queue_released
from ..models import (
    Assignment,
    AssignmentStatus,
    QueueItem,
    QueueStatus,
    Rating,
    RatingDraft,
    RatingQueue,
)
from .feedback import review_item_completed

# How many stale claims one call returns to the queue; the rest go on the next calls, so no
# single request pays for a large backlog.
EXPIRE_BATCH = 200


def claim_timeout(queue: RatingQueue) -> timedelta:
    """How long a claim lasts from its last sign of life (claimed, drafted, undone); past it,
    `assignment_expire_stale` is the one place that returns it to the queue."""
    return timedelta(minutes=queue.claim_timeout_minutes)


def undo_window() -> timedelta:
    return timedelta(seconds=getattr(settings, "REVIEW_UNDO_WINDOW_SECONDS", 600))


def _skip_locked() -> bool:
    return connection.features.has_select_for_update_skip_locked


def queue_rateable_by(queue: RatingQueue, user: AbstractBaseUser) -> bool:
    """Same rule as `RatingQueue.objects.rateable_by`, in at most two small queries: this runs
    on every claim."""
    if not getattr(user, "is_authenticated", False):
        return False
    # Fresh from the database: the queue may have been closed since `queue` was loaded.
    current = RatingQueue.objects.filter(pk=queue.pk).values("status", "eligible_group_id").first()
    if current is None or current["status"] != QueueStatus.OPEN:
        return False
    if queue.eligible_raters.filter(pk=user.pk).exists():
        return True
    if current["eligible_group_id"] is not None:
        return user.groups.filter(pk=current["eligible_group_id"]).exists()
    return user_has_role(user, Role.EXPERT_REVIEWER) and not queue.eligible_raters.exists()


def _require_rater(queue: RatingQueue, rater: AbstractBaseUser) -> None:
    if not queue_rateable_by(queue, rater):
        raise ApplicationError(_("You are not one of the raters of this queue, or it is closed."))


def _lock_own_assignment(assignment: Assignment, rater: AbstractBaseUser) -> Assignment:
    locked = (
        # Lock only the assignment: locking the joined queue row too would make every rater of
        # the queue wait on (and deadlock with) each other's foreign-key checks.
        Assignment.objects.select_for_update(of=("self",))
        .select_related("queue")
        .filter(pk=assignment.pk, rater=rater)
        .first()
    )
    if locked is None:
        raise ApplicationError(_("This item is not assigned to you."))
    return locked


@transaction.atomic
def assignment_expire_stale(*, queue: RatingQueue | None = None) -> int:
    """Return claims whose time ran out to the queue. Safe to run from many places at once."""
    stale = Assignment.objects.filter(
        status=AssignmentStatus.CLAIMED, expires_at__lt=timezone.now()
    )
    if queue is not None:
        stale = stale.filter(queue=queue)
    if _skip_locked():
        # Two sweepers never take the same claim; a claim being submitted right now is skipped.
        stale = stale.select_for_update(skip_locked=True)
    rows = list(stale.order_by("expires_at").values_list("pk", "item_id")[:EXPIRE_BATCH])
    if not rows:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        status=AssignmentStatus.EXPIRED, resolved_at=timezone.now()
    )
    for item_id, count in sorted(Counter(item_id for _pk, item_id in rows).items()):
        QueueItem.objects.filter(pk=item_id).update(claims_open=F("claims_open") - count)
    closed = RatingQueue.objects.filter(
        items__pk__in=[item_id for _, item_id in rows], status=QueueStatus.CLOSED
    )
    blind_holds_changed(closed.values_list("pk", flat=True).distinct())
    return len(rows)


def _open_items_for(queue: RatingQueue, rater: AbstractBaseUser):
    """Items with a free slot that this rater neither wrote nor has taken before, in a language
    they read (`core.selectors.reads_language_condition`: a subquery, not a query of its own)."""
    return (
        QueueItem.objects.filter(queue=queue).open_to(rater).readable_by(rater).order_by("position")
    )


@transaction.atomic
def assignment_claim(*, queue: RatingQueue, rater: AbstractBaseUser) -> Assignment | None:
    """The rater's current item: the one they hold, or a newly claimed one; None when done.

    One item at a time: a rater who already holds a claim gets it back (with a fresh timeout),
    so reloading the page never takes a second slot.

    Only items in a language the rater reads are claimed: one they declared, or a longer tag
    of it (a reader of `pt` gets `pt-BR`); a rater who declared no language reads English.
    When None comes back while items wait in other languages,
    `review.selectors.rater_languages` says how many.
    """
    _require_rater(queue, rater)
    if connection.vendor == "postgresql":
        # A claim is soft state: if a crash loses it, the transaction is lost whole (counters
        # included) and the rater simply gets an item on reload. Not waiting for the WAL flush
        # takes most of the latency out of a claim. Ratings keep the durable default.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
    now = timezone.now()
    timeout = claim_timeout(queue)
    held = (
        Assignment.objects.select_for_update()
        .filter(queue=queue, rater=rater, status=AssignmentStatus.CLAIMED)
        .order_by("claimed_at")
        .first()
    )
    if held is not None:
        # Not yet swept, so its slot is still counted in claims_open: renewing is safe.
        held.expires_at = now + timeout
        held.save(update_fields=["expires_at"])
        return held
    item = _lock_open_item(queue, rater)
    if item is None and assignment_expire_stale(queue=queue):
        # Stale claims are swept only when they stand in the rater's way: sweeping on every
        # claim would cost each claim a query while the queue still has plenty of free items.
        item = _lock_open_item(queue, rater)
    if item is None:
        return None
    QueueItem.objects.filter(pk=item.pk).update(claims_open=F("claims_open") + 1)
    fields = {"status": AssignmentStatus.CLAIMED, "claimed_at": now, "expires_at": now + timeout}
    # A claim of this rater that expired earlier is taken up again (one row per item and rater).
    renewed = Assignment.objects.filter(
        item=item, rater=rater, status=AssignmentStatus.EXPIRED
    ).update(resolved_at=None, **fields)
    if renewed:
        return Assignment.objects.get(item=item, rater=rater)
    presentation = adapter_for(item.kind).presentation(item)
    return Assignment.objects.create(
        queue=queue, item=item, rater=rater, presentation=presentation, **fields
    )


def _lock_open_item(queue: RatingQueue, rater: AbstractBaseUser) -> QueueItem | None:
    items = _open_items_for(queue, rater)
    if not _skip_locked():
        return items.first()
    item = items.select_for_update(skip_locked=True, of=("self",)).first()
    if item is None and items.exists():
        # Every open item is being claimed by someone else this instant: wait for those claims
        # to commit rather than tell the rater the queue is done. The row is read again once
        # its lock is free, so an item the others filled is passed over.
        item = items.select_for_update(of=("self",)).first()
    return item


@transaction.atomic
def assignment_skip(*, assignment: Assignment, rater: AbstractBaseUser) -> Assignment:
    """Give the item back; this rater will not be offered it again."""
    assignment = _lock_own_assignment(assignment, rater)
    if assignment.status not in (AssignmentStatus.CLAIMED, AssignmentStatus.EXPIRED):
        raise ApplicationError(_("Only an item you are working on can be skipped."))
    if assignment.status == AssignmentStatus.CLAIMED:
        QueueItem.objects.filter(pk=assignment.item_id).update(claims_open=F("claims_open") - 1)
    assignment.status = AssignmentStatus.SKIPPED
    assignment.resolved_at = timezone.now()
    assignment.save(update_fields=["status", "resolved_at"])
    _closed_queue_claim_resolved(assignment.queue_id)
    return assignment


@transaction.atomic
def rating_submit(
    *,
    assignment: Assignment,
    rater: AbstractBaseUser,
    answers: dict[str, Any],
    comment: str = "",
) -> Rating:
    """Record the rater's answers for the item they hold.

    A claim that ran out can still be submitted while the item has a free slot; once others
    have filled it, the rater is told so (their draft stays).
    """
    # Translators: the rater's comment, in "The comment is 6000 characters long; …".
    if problem := text_length_problem(comment, what=_("The comment")) or control_character_message(
        comment
    ):
        raise ApplicationError(problem)
    assignment = _lock_own_assignment(assignment, rater)
    if assignment.status in (AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED):
        raise ApplicationError(_("You have already finished with this item."))
    item = QueueItem.objects.select_for_update().get(pk=assignment.item_id)
    adapter = adapter_for(item.kind)
    cleaned = adapter.orient_answers(item, assignment, adapter.validate_answers(item, answers))
    # Re-count under the lock rather than trusting the counter alone.
    done = Rating.objects.current().filter(item=item).count()
    holds_slot = assignment.status == AssignmentStatus.CLAIMED
    free = item.required - done - item.claims_open
    if done >= item.required or (not holds_slot and free < 1):
        raise ApplicationError(
            _(
                "Your time on this item ran out and other raters have completed it; "
                "take the next item instead."
            )
        )
    now = timezone.now()
    complete = done + 1 >= item.required
    QueueItem.objects.filter(pk=item.pk).update(
        ratings_done=F("ratings_done") + 1,
        claims_open=F("claims_open") - (1 if holds_slot else 0),
        completed_at=now if complete else None,
    )
    limit = assignment.queue.claim_timeout_minutes * 60
    seconds = int(min(max((now - assignment.claimed_at).total_seconds(), 0), limit))
    rating = Rating.objects.create(
        queue_id=assignment.queue_id,
        item=item,
        assignment=assignment,
        rater=rater,
        answers=cleaned,
        comment=(comment or "").strip(),
        seconds_spent=seconds,
        submitted_at=now,
    )
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.resolved_at = now
    assignment.save(update_fields=["status", "resolved_at"])
    RatingDraft.objects.filter(assignment=assignment).delete()
    if complete:
        item.refresh_from_db()
        review_item_completed(queue=assignment.queue, item=item)
    _ratings_changed(item)
    _closed_queue_claim_resolved(assignment.queue_id)
    return rating


def _ratings_changed(item: QueueItem) -> None:
    """Tell whoever derives figures from ratings (the results app) that this item's changed."""
    object_ids = (item.object_id, item.object_id_b) if item.object_id_b else (item.object_id,)
    events.publish(RatingsChanged(queue_id=item.queue_id, kind=item.kind, object_ids=object_ids))


def blind_holds_changed(queue_ids: Iterable[int]) -> None:
    """Tell the results app that these queues' holds may have changed (a blind queue opened,
    closed, or saw a claim resolved after closing): no-op for queues of open kinds."""
    blind = RatingQueue.objects.filter(pk__in=list(queue_ids), kind__in=kinds_with("blind"))
    for queue_id in blind.values_list("pk", flat=True):
        events.publish(BlindHoldChanged(queue_id=queue_id))


def _closed_queue_claim_resolved(queue_id: int) -> None:
    # A closed queue holds only its claimed items: one resolved may end the hold.
    if RatingQueue.objects.filter(pk=queue_id, status=QueueStatus.CLOSED).exists():
        blind_holds_changed([queue_id])


@transaction.atomic
def rating_undo_last(*, queue: RatingQueue, rater: AbstractBaseUser) -> Assignment:
    """Take back the rater's most recent rating in this queue and reopen the item for them.

    Allowed within REVIEW_UNDO_WINDOW_SECONDS (default ten minutes) of submitting, whether or
    not the item has since been completed: the undone rating's slot goes back to the same rater
    as an open claim (ratings_done - 1, claims_open + 1), so nobody else can take it and the
    item can never end up over-rated. Registry feedback already applied is not rolled back; it
    runs again when the item completes again.
    """
    rating = (
        Rating.objects.current()
        .select_for_update()
        .filter(queue=queue, rater=rater)
        .order_by("-submitted_at", "-id")
        .first()
    )
    if rating is None:
        raise ApplicationError(_("You have no rating in this queue to undo."))
    if queue.kind in kinds_with("blind") and queue_released(queue):
        # Its ratings count in the figures now: rating the item again, after watching a figure
        # move, would be rating it knowing what the blind screen hid.
        raise ApplicationError(
            _(
                "This queue is closed and its ratings are published in the figures; a rating "
                "can no longer be undone."
            )
        )
    now = timezone.now()
    if now - rating.submitted_at > undo_window():
        minutes = int(undo_window().total_seconds() // 60)
        raise ApplicationError(
            ngettext(
                "Your last rating is more than %(minutes)s minute old and can no longer be undone.",
                "Your last rating is more than %(minutes)s minutes old and can no longer be "
                "undone.",
                minutes,
            )
            % {"minutes": minutes}
        )
    # One item at a time: an item the rater holds now goes back to the queue.
    for held in Assignment.objects.select_for_update().filter(
        queue=queue, rater=rater, status=AssignmentStatus.CLAIMED
    ):
        QueueItem.objects.filter(pk=held.item_id).update(claims_open=F("claims_open") - 1)
        held.status = AssignmentStatus.EXPIRED
        held.resolved_at = now
        held.save(update_fields=["status", "resolved_at"])
    QueueItem.objects.select_for_update().get(pk=rating.item_id)
    QueueItem.objects.filter(pk=rating.item_id).update(
        ratings_done=F("ratings_done") - 1, claims_open=F("claims_open") + 1, completed_at=None
    )
    rating.undone = True
    rating.undone_at = now
    rating.save(update_fields=["undone", "undone_at"])
    assignment = Assignment.objects.select_for_update().get(pk=rating.assignment_id)
    assignment.status = AssignmentStatus.CLAIMED
    assignment.claimed_at = now
    assignment.expires_at = now + claim_timeout(queue)
    assignment.resolved_at = None
    assignment.save(update_fields=["status", "claimed_at", "expires_at", "resolved_at"])
    item = QueueItem.objects.get(pk=rating.item_id)
    _ratings_changed(item)
    shown = adapter_for(item.kind).orient_answers(item, assignment, rating.answers)
    RatingDraft.objects.update_or_create(
        assignment=assignment,
        defaults={"answers": shown, "comment": rating.comment, "saved_at": now},
    )
    return assignment


@transaction.atomic
def rating_draft_save(
    *,
    assignment: Assignment,
    rater: AbstractBaseUser,
    answers: dict[str, Any],
    comment: str = "",
) -> RatingDraft:
    """Keep the rater's partial answers. Saving also shows they are still at work, so an open
    claim's timeout starts again."""
    for text in (comment, *map(str, answers.values())):
        if problem := control_character_message(text):
            raise ApplicationError(_("The draft: %(problem)s") % {"problem": problem})
    assignment = _lock_own_assignment(assignment, rater)
    if assignment.status not in (AssignmentStatus.CLAIMED, AssignmentStatus.EXPIRED):
        raise ApplicationError(_("This item is finished; there is no draft to save."))
    item = assignment.item
    now = timezone.now()
    draft, _created = RatingDraft.objects.update_or_create(
        assignment=assignment,
        defaults={
            "answers": adapter_for(item.kind).draft_answers(item, answers),
            "comment": (comment or "")[: text_max_length()],
            "saved_at": now,
        },
    )
    still_open = assignment.queue.status == QueueStatus.OPEN
    if assignment.status == AssignmentStatus.CLAIMED and still_open:
        assignment.expires_at = now + claim_timeout(assignment.queue)
        assignment.save(update_fields=["expires_at"])
    return draft
