"""Synthetic blind expert verdicts with known truth, for the synthetic release.

Every conversation of the synthetic run gets one verdict from a synthetic panelist in a blind
(external-panel) queue. The panelist gives the *true* verdict the dataset was drawn from
(before the judge's errors), so the judge-trust figures computed from these ratings can be
checked against the planted truth: agreement = share of conversations where the judge's
verdict equals the true one. The queue's name, the rater and every answer say synthetic, and
the run is flagged synthetic, so pages and the API mark these figures as synthetic.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from review.models import (
    Assignment,
    AssignmentStatus,
    ItemKind,
    QueueItem,
    QueueStatus,
    Rating,
    RatingQueue,
)

BATCH = 2_000
RATER_USERNAME = "synthetic-expert"


def synthetic_blind_verdicts_create(*, run, truth: dict[int, bool], mark: str) -> RatingQueue:
    """A closed blind queue with one synthetic rating per conversation: ``truth`` maps a
    conversation id to its true verdict (behaviour present)."""
    rater, _ = get_user_model().objects.get_or_create(
        username=RATER_USERNAME, defaults={"is_active": False}
    )
    queue = RatingQueue.objects.create(
        name=f"{mark} blind expert verdicts (known truth) for run {run.pk}",
        kind=ItemKind.EXTERNAL_PANEL,
        required_ratings=1,
        external_panel=True,
        status=QueueStatus.CLOSED,
        population_size=len(truth),
        sample_size=len(truth),
        instructions="Synthetic: generated with the synthetic release, not expert ratings.",
    )
    now = timezone.now()
    ids = sorted(truth)
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        items = QueueItem.objects.bulk_create(
            [
                QueueItem(
                    queue=queue,
                    kind=ItemKind.EXTERNAL_PANEL,
                    object_id=pk,
                    position=start + i,
                    strata={"synthetic": True},
                    required=1,
                    ratings_done=1,
                    completed_at=now,
                )
                for i, pk in enumerate(chunk)
            ]
        )
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    queue=queue,
                    item=item,
                    rater=rater,
                    status=AssignmentStatus.SUBMITTED,
                    expires_at=now + timedelta(minutes=1),
                    resolved_at=now,
                )
                for item in items
            ]
        )
        Rating.objects.bulk_create(
            [
                Rating(
                    queue=queue,
                    item=item,
                    assignment=assignment,
                    rater=rater,
                    answers={
                        "examples_adequate": "yes",
                        "verdict": "present" if truth[item.object_id] else "absent",
                        "synthetic": True,
                    },
                )
                for item, assignment in zip(items, assignments, strict=True)
            ]
        )
    return queue
