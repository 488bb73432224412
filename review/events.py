"""What the review app tells the apps above it (`core.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from core.events import Event


@dataclass(frozen=True)
class RatingsChanged(Event):
    """Ratings were submitted or undone in a rating queue of `kind`; `object_ids` are the rated
    objects (conversations, for the kinds that rate them)."""

    queue_id: int
    kind: str
    object_ids: tuple[int, ...]


@dataclass(frozen=True)
class BlindHoldChanged(Event):
    """A blind queue began or stopped holding its conversations back, or its ratings became
    countable (`review.blindness`): figures over the runs of its items are drawn again."""

    queue_id: int
