"""Rubric scoring, HealthBench's formulas (openai/simple-evals ``healthbench_eval.py``). No Django.

    item_score([5, 3, -4], [True, False, True])   # (5 - 4) / (5 + 3) = 0.125
    item_score([2, 6, -10], [True, False, True])  # (2 - 10) / 8 = -1.0 (not clipped)
    aggregate_estimate([0.125, 1.0, -1.0])        # clip(mean) = 0.0417, bootstrap std and interval

An item's score is the sum of the points of the criteria the reply met, divided by the sum of
the positive points (the best reachable total). It is **not** clipped: meeting penalised
criteria can take it below zero, and an aggregate must see that, or a reply that does harm
would count as merely unhelpful. An aggregate (overall, per behaviour dimension, per acuity, per
population) is the mean of item scores clipped to [0, 1], with the standard deviation of that
clipped mean over bootstrap resamples of the items (HealthBench's ``bootstrap_std``), an
interval that neither collapses nor under-covers with few items
(:func:`stats.bounded_means.clipped_mean_interval`: the percentile interval of those resamples
read "1.000 [1.000, 1.000] n = 3" when every item scored 1) and the number of items.
"""

from collections.abc import Iterable, Sequence

import numpy as np

from stats import bootstrap_ci
from stats.bounded_means import clipped_mean_interval
from stats.estimates import Estimate

MIN_POINTS = -10
MAX_POINTS = 10
# simple-evals draws 1000 bootstrap samples for its standard deviation.
BOOTSTRAP_SAMPLES = 1000
AGGREGATE_METHOD = (
    "mean of item scores clipped to [0, 1] (HealthBench); interval: hull of the t interval over "
    "items (G - 1 degrees of freedom, clamped to [0, 1]) and the Wilson interval on the number "
    "of items"
)


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _validate(points: Sequence[int], met: Sequence[bool]) -> None:
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


def item_score(points: Sequence[int], met: Sequence[bool]) -> float:
    """Points of met criteria ÷ sum of positive points; not clipped (it can be negative).

    Raises ValueError when the lists differ in length, a weight is outside −10..+10 or zero,
    or the rubric has no positive criterion (nothing to reach: the score is undefined, and
    silently returning 0 or 1 would bias every aggregate it enters).
    """
    points, met = list(points), list(met)
    _validate(points, met)
    reachable = sum(value for value in points if value > 0)
    if reachable == 0:
        raise ValueError(
            "The rubric has no criterion with positive points, so no score can be reached; "
            "add at least one positive criterion."
        )
    earned = sum(value for value, was_met in zip(points, met, strict=True) if was_met)
    return earned / reachable


def item_score_or_none(points: Sequence[int], met: Sequence[bool]) -> float | None:
    """`item_score`, or None where no positive criterion is left (a dimension without one)."""
    if not any(value > 0 for value in points):
        return None
    return item_score(points, met)


def aggregate_score(item_scores: Iterable[float]) -> float:
    """The mean of item scores, clipped to [0, 1]. Raises ValueError for no items."""
    scores = [float(score) for score in item_scores]
    if not scores:
        raise ValueError("aggregate_score needs at least one item score.")
    return _clip(sum(scores) / len(scores))


def aggregate_estimate(
    item_scores: Iterable[float], *, seed: int = 0, confidence: float = 0.95
) -> tuple[Estimate, float | None]:
    """The aggregate as an Estimate, and its bootstrap standard deviation.

    Resamples the items with replacement `BOOTSTRAP_SAMPLES` times and clips each resampled
    mean, as HealthBench does, for its standard deviation; the interval is
    `clipped_mean_interval`, whose coverage holds from two items up, at 0 and 1 included.
    One item gives a value without an interval; none gives "not enough data".
    """
    scores = [float(score) for score in item_scores]
    if not scores:
        return Estimate.insufficient(n=0, unit="score", method=AGGREGATE_METHOD), None
    value = aggregate_score(scores)
    if len(scores) < 2:
        return Estimate(value=value, n=1, n_clusters=1, unit="score", method=AGGREGATE_METHOD), None
    clipped_means: list[float] = []

    def clipped_mean(sample: np.ndarray) -> float:
        mean = _clip(float(sample.mean()))
        clipped_means.append(mean)
        return mean

    low, high = clipped_mean_interval(scores, confidence) or (None, None)
    # Run for HealthBench's bootstrap standard deviation (the clipped means it collects).
    bootstrap_ci(
        scores,
        n_resamples=BOOTSTRAP_SAMPLES,
        confidence=confidence,
        seed=seed,
        statistic=clipped_mean,
    )
    estimate = Estimate(
        value=value,
        low=low,
        high=high,
        method=AGGREGATE_METHOD,
        confidence=confidence,
        n=len(scores),
        n_clusters=len(scores),
        unit="score",
    )
    return estimate, float(np.std(clipped_means))


def weighted_item_score(
    points: Sequence[int], met: Sequence[bool], weights: Sequence[float]
) -> float | None:
    """`item_score` with every criterion's points multiplied by a weight (its dimension's share
    of an audience's priorities): met weighted points ÷ positive weighted points, not clipped.
    None when no positive criterion keeps a positive weight. With every weight 1 it is
    `item_score`."""
    points, met, weights = list(points), list(met), [float(w) for w in weights]
    _validate(points, met)
    if len(weights) != len(points) or any(w < 0 for w in weights):
        raise ValueError("weighted_item_score needs one non-negative weight per criterion.")
    reachable = sum(p * w for p, w in zip(points, weights, strict=True) if p > 0)
    if reachable <= 0:
        return None
    earned = sum(p * w for p, w, m in zip(points, weights, met, strict=True) if m)
    return earned / reachable
