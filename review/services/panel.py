"""Recording a panel's ratings made elsewhere (on paper, in a workshop, or the demo's seeded
panel) in one go, rather than item by item through claims.

The answers are checked by the kind's adapter exactly as a rater's would be, each rater rates
an item at most once, and a completed item changes what it changes after an ordinary rating
(`review_item_completed`: a rubric criterion's consensus, a contested metric).
"""

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError

from ..kinds import adapter_for
from ..models import Assignment, AssignmentStatus, QueueItem, Rating, RatingQueue
from .assignments import claim_timeout, queue_rateable_by
from .feedback import review_item_completed


@transaction.atomic
def panel_ratings_record(
    *,
    queue: RatingQueue,
    ratings: Mapping[AbstractBaseUser, Mapping[int, Mapping[str, Any]]],
) -> int:
    """Record each rater's answers, keyed by the rated object's id; returns how many.

    Raises ApplicationError (and records nothing) for a rater who may not rate the queue, an
    object not in it, an item already rated by that rater or already complete, or an answer
    the item's questions do not accept.
    """
    items = {item.object_id: item for item in QueueItem.objects.filter(queue=queue)}
    now = timezone.now()
    assignments, answers_of, counts = [], [], {}
    for rater, answers_by_object in ratings.items():
        if not queue_rateable_by(queue, rater):
            raise ApplicationError(
                _("%(rater)s is not one of the raters of this queue.") % {"rater": rater}
            )
        for object_id, answers in answers_by_object.items():
            item = items.get(object_id)
            if item is None:
                raise ApplicationError(
                    _("Object %(object_id)s is not an item of this queue.")
                    % {"object_id": object_id}
                )
            adapter = adapter_for(item.kind)
            assignment = Assignment(
                queue=queue,
                item=item,
                rater=rater,
                status=AssignmentStatus.SUBMITTED,
                claimed_at=now,
                expires_at=now + claim_timeout(queue),
                resolved_at=now,
                presentation={},
            )
            cleaned = adapter.orient_answers(
                item, assignment, adapter.validate_answers(item, answers)
            )
            assignments.append(assignment)
            answers_of.append(cleaned)
            counts[item.pk] = counts.get(item.pk, 0) + 1
    for item in items.values():
        if item.ratings_done + counts.get(item.pk, 0) > item.required:
            raise ApplicationError(
                _("Item %(item)s would get more ratings than it needs.") % {"item": item.object_id}
            )
    # The unique (item, rater) constraint refuses a second rating by the same rater.
    Assignment.objects.bulk_create(assignments)
    Rating.objects.bulk_create(
        Rating(
            queue=queue,
            item=assignment.item,
            assignment=assignment,
            rater=assignment.rater,
            answers=cleaned,
            submitted_at=now,
        )
        for assignment, cleaned in zip(assignments, answers_of, strict=True)
    )
    completed = []
    for item in items.values():
        added = counts.get(item.pk, 0)
        if not added:
            continue
        complete = item.ratings_done + added >= item.required
        QueueItem.objects.filter(pk=item.pk).update(
            ratings_done=F("ratings_done") + added, completed_at=now if complete else None
        )
        if complete:
            completed.append(item)
    for item in completed:
        item.refresh_from_db()
        review_item_completed(queue=queue, item=item)
    return len(assignments)
