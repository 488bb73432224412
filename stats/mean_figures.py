"""Figures of statistics that are not functions of per-item sums: the mean of item scores
(HealthBench's rubric aggregate) and any statistic of resampled item indices, each with its
percentile bootstrap -- except a mean of 0/1 values, which is a proportion and gets
:func:`.figures.proportion_estimate`'s interval."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import MIN_ITEMS, Estimate, Exclusion, Unit

from .bootstrap import bootstrap_distribution
from .few_clusters import wilson_interval
from .figures import BOOTSTRAP, DEFAULT_RESAMPLES, _codes, _method, proportion_estimate
from .percentiles import percentile_interval


def mean_estimate(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    clip: tuple[float, float] | None = None,
    unit: Unit = "score",
    over: str = "items",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_n: int = MIN_ITEMS,
    excluded: Iterable[Exclusion] = (),
) -> Estimate:
    """Mean of ``values`` (e.g. HealthBench item scores), optionally clipped, with its bootstrap.

    HealthBench (simple-evals) clips the *aggregate*: ``clip(mean(item scores), 0, 1)``, with
    the bootstrap standard deviation of that clipped mean. Here each resampled mean is clipped
    the same way, so interval and ``sd`` describe the published (clipped) figure.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.isfinite(x).all():
        raise ValueError("values must be finite")
    unclipped = clip is None or (clip[0] <= 0.0 and clip[1] >= 1.0)
    if unit != "difference" and unclipped and np.isin(x, (0.0, 1.0)).all():
        # A mean of 0/1 values is a proportion: its interval, which neither collapses nor
        # leaves [0, 1] (clipping to a range holding [0, 1] changes nothing).
        return proportion_estimate(
            x,
            clusters,
            unit=unit,
            over=over,
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
            min_n=min_n,
            excluded=excluded,
        )
    n = int(x.size)
    codes, g = _codes(clusters, n)
    method = _method(clusters, over)
    kept = tuple(e for e in excluded if e.count)
    if n < min_n:
        return Estimate.insufficient(n=n, n_clusters=g, unit=unit, method=method, excluded=kept)
    value = float(x.mean())
    low = high = sd = None
    if g >= 2:
        dist = bootstrap_distribution(
            x, None if clusters is None else codes, n_resamples, seed, "mean"
        )
        if clip is not None:
            dist = np.clip(dist, *clip)
        tail = (1.0 - confidence) / 2.0
        low, high = (float(v) for v in np.quantile(dist, [tail, 1.0 - tail]))
        sd = float(dist.std(ddof=1))
    if clip is not None:
        value = float(np.clip(value, *clip))
        method += f", mean clipped to [{clip[0]:g}, {clip[1]:g}]"
    if low is not None and high is not None and high <= low:
        low, high = _opened(x, value, g, low, high, unit=unit, confidence=confidence)
    return Estimate(value, low, high, method, confidence, n, g, kept, unit, sd=sd)


def _opened(
    x: NDArray[np.float64],
    value: float,
    g: int,
    low: float,
    high: float,
    *,
    unit: Unit,
    confidence: float,
) -> tuple[float, float]:
    """A bootstrap interval that collapsed (every resample agreed: all items alike) hulled with
    the Wilson interval of the mean on the G clusters, for values in a bounded range -- [0, 1],
    or [-1, 1] for a difference, mapped onto [0, 1]: a variable in [0, 1] with mean p has
    variance at most p (1 - p), so Wilson's score variance bounds it (as
    :mod:`.bounded_means` does for clipped means). Unbounded values keep the point."""
    lo, hi = (-1.0, 1.0) if unit == "difference" else (0.0, 1.0)
    if x.min() < lo or x.max() > hi:
        return low, high
    share = (value - lo) / (hi - lo)
    w_low, w_high = (float(b) for b in wilson_interval(share * g, g, confidence))
    return min(low, lo + w_low * (hi - lo), value), max(high, lo + w_high * (hi - lo), value)


def resampled_estimate(
    n_items: int,
    statistic: Callable[[NDArray[np.intp]], float],
    *,
    unit: Unit = "coefficient",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_n: int = MIN_ITEMS,
) -> Estimate:
    """``statistic(item indices)`` of all items, with a bootstrap over items (one call each).

    For statistics that are not functions of per-item sums (Krippendorff's alpha with missing
    ratings); ``statistic`` returns ``nan`` where a resample leaves it undefined.
    """
    if n_items < min_n:
        return Estimate.insufficient(n=n_items, unit=unit, method=BOOTSTRAP)
    value = float(statistic(np.arange(n_items)))
    if not np.isfinite(value):
        return Estimate.insufficient(
            n=n_items, unit=unit, method=BOOTSTRAP, reason="undefined (no variation)"
        )
    dist = bootstrap_distribution(
        np.arange(n_items, dtype=float),
        None,
        n_resamples,
        seed,
        lambda drawn: statistic(drawn.astype(np.intp)),
    )
    lo, hi = percentile_interval(dist, confidence)
    return Estimate(
        value=value,
        low=float(lo),
        high=float(hi),
        method=BOOTSTRAP,
        confidence=confidence,
        n=n_items,
        n_clusters=n_items,
        unit=unit,
    )
