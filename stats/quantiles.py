"""Tail quantiles of many resampled distributions at once, equal to ``np.quantile``'s.

A percentile interval needs four order statistics of each distribution (the neighbours of the
2.5 % and 97.5 % points), not a partition of all of it: each row's candidates for a tail are
the values beyond a threshold read off a small leading sample of the row (resamples are
independent draws, so the first ones are a random sample), and only those are partitioned.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

# Rows shorter than this are partitioned whole: the pre-selection would not pay.
_MIN_LENGTH = 2_000
# The threshold keeps about twice the values a tail needs, read from a sample holding about
# this many of them: the kept count falls short (and the row is partitioned whole) with
# probability ~1e-6 a row.
_SAMPLE_TAIL = 100


def quantile_rows(x: ArrayLike, quantiles: ArrayLike) -> NDArray[np.float64]:
    """``np.quantile(x, quantiles, axis=1)`` of a 2-D array (default 'linear' method): the same
    figures, bit for bit. ``quantiles`` near 0 and 1 (tails) are where it saves work."""
    x = np.asarray(x, dtype=np.float64)
    q = np.asarray(quantiles, dtype=np.float64)
    if x.ndim != 2 or q.ndim != 1:
        raise ValueError("need a 2-D array and a 1-D list of quantiles")
    m, n = x.shape
    if n < _MIN_LENGTH or m == 0 or q.size == 0 or not np.isfinite(x.sum()):
        return np.quantile(x, q, axis=1)
    previous, following, gamma = linear_neighbours(n, q)
    ranks = np.unique(np.concatenate([previous, following]))
    at = dict(zip(ranks.tolist(), _order_statistics(x, ranks).T, strict=True))
    a = np.stack([at[r] for r in previous.tolist()])
    b = np.stack([at[r] for r in following.tolist()])
    return lerp(a, b, gamma[:, None])


def linear_neighbours(
    n: int, q: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """np.quantile's 'linear' method on n values: the ranks of the order statistics either side
    of each quantile's virtual index (n - 1) q, and the weight of the upper one."""
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    previous = previous.astype(np.intp)
    following = np.minimum(previous + 1, n - 1)
    previous = np.where(virtual >= n - 1, n - 1, previous)
    return previous, following, gamma


def lerp(a: NDArray[np.float64], b: NDArray[np.float64], t: ArrayLike) -> NDArray[np.float64]:
    """np.quantile's interpolation between neighbours, by its two formulas (bit for bit)."""
    t = np.asarray(t, dtype=np.float64)
    diff = b - a
    out = a + diff * t
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    return out


def _order_statistics(x: NDArray[np.float64], ranks: NDArray[np.intp]) -> NDArray[np.float64]:
    """``np.sort(x, axis=1)[:, ranks]`` for sorted ranks in the rows' tails (finite ``x``)."""
    m, n = x.shape
    low, high = ranks[ranks < n // 2], ranks[ranks >= n // 2]
    need_low = int(low.max()) + 1 if low.size else 0
    need_high = n - int(high.min()) if high.size else 0
    need = max(need_low, need_high)
    sample = -(-_SAMPLE_TAIL * n // (2 * need))
    if sample * 2 > n:
        return np.sort(x, axis=1)[:, ranks]
    # Thresholds leaving about twice the values each tail needs beyond them.
    k = min(sample - 1, round(2 * need * sample / n))
    head = np.sort(x[:, :sample], axis=1)
    low_cut = head[:, k] if need_low else np.full(m, -np.inf)
    high_cut = head[:, sample - 1 - k] if need_high else np.full(m, np.inf)
    below = x <= low_cut[:, None]
    above = x >= high_cut[:, None]
    n_below, n_above = below.sum(axis=1), above.sum(axis=1)
    # A short count cannot hold the wanted ranks; a long one (a wide atom, or tails that meet)
    # would not pay: such rows are sorted whole.
    whole = (n_below < need_low) | (n_above < need_high) | (n_below + n_above > 8 * need)
    whole |= low_cut >= high_cut
    out = np.empty((m, ranks.size))
    if whole.any():
        out[whole] = np.sort(x[whole], axis=1)[:, ranks]
        below[whole] = above[whole] = False
        n_below[whole] = n_above[whole] = 0
    rows = np.flatnonzero(~whole)
    if rows.size == 0:
        return out
    keep = np.logical_or(below, above, out=below)
    counts = n_below + n_above
    kept = x[keep]
    # Each row's kept values sorted: its smallest n_below, then its largest n_above (the
    # thresholds do not meet), padded with +inf.
    padded = np.full((m, int(counts.max())), np.inf)
    starts = np.cumsum(counts) - counts
    padded[np.repeat(np.arange(m), counts), np.arange(kept.size) - np.repeat(starts, counts)] = kept
    padded = np.sort(padded[rows], axis=1)
    # Rank r from the top is at n_below + r - (n - n_above) of its row.
    position = np.where(ranks < n // 2, ranks, ranks - n)[None, :]
    position = position + np.where(ranks < n // 2, 0, (n_below + n_above)[rows, None])
    out[rows] = np.take_along_axis(padded, position, axis=1)
    return out


__all__ = ["lerp", "linear_neighbours", "quantile_rows"]
