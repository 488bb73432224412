"""Vectorized cluster bootstraps over per-cluster sums (pure NumPy, no Django).

`results.statistics.bootstrap_ci` covers a single mean. The analyses here need statistics that
are functions of several sums at once (Fleiss' kappa, a difference of two rates, weighted
scores of ten models under the same resample), so they resample clusters once and hand the
resampled column sums to the statistic. Every statistic used here is a function of cluster
sums, so a resample is fully described by how often each cluster was drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

# Bound on hits-matrix elements per chunk (~32 MB of float64).
CHUNK_ELEMENTS = 1 << 22


def cluster_hits(rng: np.random.Generator, n_clusters: int, rows: int) -> NDArray[np.float64]:
    """(rows, n_clusters): how often each cluster is drawn in n_clusters draws with replacement."""
    idx = (
        rng.integers(0, n_clusters, size=(rows, n_clusters))
        + (np.arange(rows) * n_clusters)[:, None]
    )
    counts = np.bincount(idx.ravel(), minlength=rows * n_clusters)
    return counts.reshape(rows, n_clusters).astype(np.float64)


def cluster_sum_distribution(
    sums: NDArray[np.float64],
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> NDArray[np.float64]:
    """Bootstrap distribution of `statistic(resampled column sums)`.

    `sums[c, j]` is column j summed over the units of cluster c (a 2-D array, or 3-D
    `(clusters, a, b)`, flattened over the trailing axes for the product and restored before
    `statistic` is called). `statistic` maps an `(rows, ...)` array of resampled sums to
    `(rows,)` or `(rows, k)` values; NaN marks a resample where the statistic is undefined.
    """
    sums = np.asarray(sums, dtype=np.float64)
    g = sums.shape[0]
    if g < 2:
        raise ValueError(f"cluster bootstrap needs at least two clusters; got {g}")
    tail_shape = sums.shape[1:]
    flat = sums.reshape(g, -1)
    rng = np.random.default_rng(seed)
    step = max(1, CHUNK_ELEMENTS // max(g, 1))
    parts = []
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        resampled = (cluster_hits(rng, g, rows) @ flat).reshape((rows, *tail_shape))
        parts.append(np.asarray(statistic(resampled), dtype=np.float64))
    return np.concatenate(parts, axis=0)


def percentile_interval(
    distribution: NDArray[np.float64], confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile interval along axis 0, ignoring undefined (NaN) resamples."""
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        finite = np.isfinite(distribution).any(axis=0)
        safe = np.where(np.isfinite(distribution), distribution, np.nan)
        if not np.all(finite):
            # nanquantile warns on all-NaN columns; fill those with a dummy and mask afterwards.
            safe = np.where(finite, safe, 0.0)
        low, high = np.nanquantile(safe, [tail, 1.0 - tail], axis=0)
    low = np.where(finite, low, np.nan)
    high = np.where(finite, high, np.nan)
    return low, high


def fleiss_from_sums(resampled: NDArray[np.float64], raters: int) -> NDArray[np.float64]:
    """Fleiss' kappa for binary ratings from sums of (pair agreement P_i, present count, items).

    Fleiss (1971): P_bar = mean P_i, p = share of "present" ratings, P_e = p^2 + (1-p)^2,
    kappa = (P_bar - P_e) / (1 - P_e); undefined (NaN) when every rating is the same.
    """
    agreement, present, items = resampled[:, 0], resampled[:, 1], resampled[:, 2]
    with np.errstate(all="ignore"):
        p_bar = agreement / items
        p = present / (items * raters)
        p_e = p * p + (1.0 - p) * (1.0 - p)
        kappa = (p_bar - p_e) / (1.0 - p_e)
    return np.where(np.isclose(p_e, 1.0), np.nan, kappa)


def grouped_difference_intervals(
    sums: NDArray[np.float64],
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Intervals of `y_a/n_a - y_b/n_b` for many groups that each have the same few clusters.

    `sums[m, c] = (y_a, n_a, y_b, n_b)` for group m's cluster c (clusters with n = 0 on both
    sides are padding: groups with fewer clusters are resampled among their own clusters only).
    All groups are resampled at once, in memory-bounded chunks of resamples.
    """
    sums = np.asarray(sums, dtype=np.float64)
    m, c = sums.shape[:2]
    present = (sums[:, :, 1] + sums[:, :, 3]) > 0
    sizes = present.sum(axis=1)
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    rng = np.random.default_rng(seed)
    for size in np.unique(sizes):
        if size < 2:
            continue
        rows_of = np.flatnonzero(sizes == size)
        # Move each group's real clusters to the front so that draws 0..size-1 index them.
        order = np.argsort(~present[rows_of], axis=1, kind="stable")[:, :size]
        sub = np.take_along_axis(sums[rows_of], order[:, :, None], axis=1)
        groups = np.arange(len(rows_of))[None, :, None]
        step = max(1, CHUNK_ELEMENTS // (len(rows_of) * size * 4))
        parts = []
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            # Draw `size` clusters with replacement per group and resample, then add them up.
            draws = rng.integers(0, size, size=(rows, len(rows_of), size))
            total = sub[groups, draws].sum(axis=2)
            with np.errstate(all="ignore"):
                parts.append(total[..., 0] / total[..., 1] - total[..., 2] / total[..., 3])
        lo, hi = percentile_interval(np.concatenate(parts, axis=0), confidence)
        low[rows_of], high[rows_of] = lo, hi
    return low, high
