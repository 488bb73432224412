"""Synthetic review rows for load tests and benchmarks, written in bulk; never experts' ratings.

The synthetic dataset generator (`demo/synthetic_verdicts.py`) decides which items are rated
and how; these services write them as review stores real ratings (a closed queue, its items,
each with one submitted assignment and its rating), marked wherever a reader meets them: the
queue's name and instructions, the inactive synthetic rater, and the answers themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from core.languages import DEFAULT_LANGUAGE

from ..kinds import Candidate, adapter_for
from ..models import (
    Assignment,
    AssignmentStatus,
    QueueItem,
    QueuePurpose,
    QueueStatus,
    Rating,
    RatingQueue,
)

BATCH = 2_000
SYNTHETIC_RATER_USERNAME = "synthetic-expert"


@dataclass(frozen=True, slots=True)
class SyntheticRating:
    """One item to create and the answers of its one rating."""

    candidate: Candidate
    answers: Mapping[str, Any]
    inclusion_probability: float | None = None  # only for an item drawn by a sample


@transaction.atomic
def rating_queue_create_synthetic(
    *,
    name: str,
    kind: str,
    instructions: str,
    population_size: int,
    sample_size: int,
    strata: Sequence[str] = (),
    seed: int = 0,
    purpose: str = QueuePurpose.GENERAL,
    run=None,
    external_panel: bool = False,
) -> RatingQueue:
    """A closed queue of one rating per item, for `ratings_bulk_create_synthetic` to fill."""
    return RatingQueue.objects.create(
        name=name,
        kind=kind,
        instructions=instructions,
        required_ratings=1,
        external_panel=external_panel,
        status=QueueStatus.CLOSED,
        sample_size=sample_size,
        strata=list(strata),
        seed=seed,
        population_size=population_size,
        purpose=purpose,
        run=run,
    )


@transaction.atomic
def ratings_bulk_create_synthetic(*, queue: RatingQueue, ratings: Sequence[SyntheticRating]) -> int:
    """The queue's items in the order given, each completed by one submitted rating of the
    synthetic rater (created inactive on first use); returns the number of ratings."""
    rater, _ = get_user_model().objects.get_or_create(
        username=SYNTHETIC_RATER_USERNAME, defaults={"is_active": False}
    )
    now = timezone.now()
    for start in range(0, len(ratings), BATCH):
        chunk = ratings[start : start + BATCH]
        languages = adapter_for(queue.kind).languages([r.candidate.object_id for r in chunk])
        items = QueueItem.objects.bulk_create(
            [
                QueueItem(
                    queue=queue,
                    kind=queue.kind,
                    object_id=r.candidate.object_id,
                    object_id_b=r.candidate.object_id_b,
                    position=start + i,
                    strata=dict(r.candidate.strata),
                    inclusion_probability=r.inclusion_probability,
                    language=languages.get(r.candidate.object_id, DEFAULT_LANGUAGE),
                    metric_id=r.candidate.metric_id,
                    required=1,
                    ratings_done=1,
                    completed_at=now,
                )
                for i, r in enumerate(chunk)
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
                    answers=dict(r.answers),
                )
                for item, assignment, r in zip(items, assignments, chunk, strict=True)
            ]
        )
    return len(ratings)
