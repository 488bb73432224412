"""Rubric scoring, the HealthBench / MentalHealthBench formula. Plain Python: no Django needed.

    item_score([5, 3, -4], [True, False, True])   # (5 - 4) / (5 + 3) = 0.125
    aggregate_score([0.125, 1.0, 0.5])            # 0.541666…

An item's score is the sum of the points of the criteria the reply met, divided by the sum of
the positive points (the best reachable total), clipped to [0, 1]: meeting a negative
criterion (a penalised behaviour) lowers the score, and a reply cannot score below zero.
Aggregates (overall, per behaviour dimension, per acuity) are the mean of item scores, clipped.
"""

from collections.abc import Iterable, Sequence

MIN_POINTS = -10
MAX_POINTS = 10


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def item_score(points: Sequence[int], met: Sequence[bool]) -> float:
    """Points of met criteria ÷ sum of positive points, clipped to [0, 1].

    Raises ValueError when the lists differ in length, a weight is outside −10..+10 or zero,
    or the rubric has no positive criterion (nothing to reach: the score is undefined, and
    silently returning 0 or 1 would bias every aggregate it enters).
    """
    points = list(points)
    met = list(met)
    if len(points) != len(met):
        raise ValueError(
            f"item_score needs one met/not-met value per criterion: got {len(points)} points and "
            f"{len(met)} met values."
        )
    for value in points:
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"Criterion points must be integers, got {value!r}.")
        if value == 0 or not MIN_POINTS <= value <= MAX_POINTS:
            raise ValueError(
                f"Criterion points must be between −10 and +10 and not 0, got {value}."
            )
    reachable = sum(value for value in points if value > 0)
    if reachable == 0:
        raise ValueError(
            "The rubric has no criterion with positive points, so no score can be reached; "
            "add at least one positive criterion."
        )
    earned = sum(value for value, was_met in zip(points, met, strict=True) if was_met)
    return _clip(earned / reachable)


def aggregate_score(item_scores: Iterable[float]) -> float:
    """The mean of item scores, clipped to [0, 1]. Raises ValueError for no items."""
    scores = [float(score) for score in item_scores]
    if not scores:
        raise ValueError("aggregate_score needs at least one item score.")
    return _clip(sum(scores) / len(scores))
