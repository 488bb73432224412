"""Percentile intervals and standard deviations read off a bootstrap distribution (:mod:`.bootstrap`
draws them)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def percentile_interval(
    distribution: NDArray[np.float64], confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile interval along axis 0, ignoring undefined (NaN) resamples."""
    tail = (1.0 - confidence) / 2.0
    dist = np.asarray(distribution, dtype=np.float64)
    if dist.ndim == 1:
        low, high = percentile_interval(dist[:, None], confidence)
        return low[0], high[0]
    finite = np.isfinite(dist)
    whole = finite.all(axis=0)
    low = np.full(dist.shape[1:], np.nan)
    high = np.full(dist.shape[1:], np.nan)
    # Columns without an undefined resample in one call (the same figures as nanquantile's
    # column-by-column loop); the others one by one.
    if whole.any():
        low[whole], high[whole] = _quantile_pair(dist[:, whole], tail)
    some = finite.any(axis=0) & ~whole
    if some.any():
        safe = np.where(finite[:, some], dist[:, some], np.nan)
        low[some], high[some] = np.nanquantile(safe, [tail, 1.0 - tail], axis=0)
    return low, high


def bootstrap_sd(distribution: NDArray[np.float64]) -> float | None:
    """Standard deviation of a 1-D bootstrap distribution over its defined (finite) resamples;
    None with fewer than two."""
    finite = distribution[np.isfinite(distribution)]
    return float(finite.std(ddof=1)) if finite.size > 1 else None


def _quantile_pair(dist: NDArray[np.float64], tail: float) -> NDArray[np.float64]:
    """``np.quantile(dist, [tail, 1 - tail], axis=0)`` (linear interpolation) of finite columns,
    the same figures at less cost: each column is partitioned once, at the upper neighbour of
    the low quantile and the lower neighbour of the high one; the two other order statistics
    are the largest value left of the first and the smallest right of the second. (NumPy also
    places the minimum, maximum and all four neighbours, along a strided axis.)"""
    n = dist.shape[0]
    virtual = (n - 1) * np.array([tail, 1.0 - tail])
    previous = np.floor(virtual)
    gamma = virtual - previous
    lo, hi = int(previous[0]), int(previous[1])
    if not (0.0 < tail < 0.5 and 0 <= lo < hi < n - 1):
        return np.quantile(dist, [tail, 1.0 - tail], axis=0)
    columns = np.ascontiguousarray(dist.reshape(n, -1).T)
    columns.partition([lo + 1, hi], axis=1)
    below = columns[:, : lo + 1].max(axis=1)
    above = columns[:, hi + 1 :].min(axis=1)
    pairs = ((below, columns[:, lo + 1], gamma[0]), (columns[:, hi], above, gamma[1]))
    return np.stack([_lerp(a, b, t) for a, b, t in pairs]).reshape((2, *dist.shape[1:]))


def _lerp(a: NDArray[np.float64], b: NDArray[np.float64], t: float) -> NDArray[np.float64]:
    """NumPy's quantile interpolation, operation for operation (so the figures are identical):
    from the lower point below ``t = 1/2``, from the upper point from there on."""
    diff = b - a
    out = a + diff * t
    if t >= 0.5:
        out = b - diff * (1 - t)
    return out
