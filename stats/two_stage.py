"""The two-stage bootstrap: clusters, then the units within each drawn cluster."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .bootstrap import _chunks, _cluster_codes
from .resampling import Draws


def two_stage_sum_distribution(
    unit_sums: NDArray[np.float64],
    clusters: ArrayLike,
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> NDArray[np.float64]:
    """Two-stage bootstrap distribution of `statistic(resampled column sums)`.

    Stage one draws clusters with replacement; stage two redraws, for every drawn copy of a
    cluster, its units with replacement (Davison & Hinkley 1997, sec. 3.8, strategy 1). With
    few clusters (a metric's three base scenarios) the one-stage bootstrap has only a handful of
    distinct resamples and ignores the variation between units of a cluster; the second stage
    adds it, erring if at all towards a wider interval. `unit_sums[u, j]` is unit u's
    contribution to column j; one cluster label per unit; one cluster is enough.
    """
    sums = np.asarray(unit_sums, dtype=np.float64)
    if sums.ndim != 2 or sums.shape[0] < 2:
        raise ValueError("the two-stage bootstrap needs at least two units")
    codes, g = _cluster_codes(clusters, sums.shape[0])
    order = np.argsort(codes, kind="stable")
    sizes = tuple(np.bincount(codes, minlength=g).tolist())
    parts = [
        np.asarray(statistic(weights @ sums[order]), dtype=np.float64)
        for weights in two_stage_weights(sizes, n_resamples, seed)
    ]
    return np.concatenate(parts, axis=0)


def two_stage_weights(
    sizes: tuple[int, ...], n_resamples: int, seed: int | None
) -> list[NDArray[np.float64]]:
    """The two-stage bootstrap's unit weights, in chunks of rows: clusters of `sizes` units,
    units laid out cluster after cluster. They depend only on the sizes and the seed, so data
    sets of one shape share them (``stats.batched``)."""
    g, units = len(sizes), int(sum(sizes))
    draws = Draws(seed)
    edges = np.concatenate([[0], np.cumsum(sizes)])
    chunks = []
    for _, rows in _chunks(n_resamples, units):
        if g > 1:
            drawn = draws.counts(np.ones(g, dtype=np.int64), rows).astype(np.int64)
        else:
            drawn = np.ones((rows, 1), dtype=np.int64)
        weights = np.zeros((rows, units))
        for c, m in enumerate(sizes):
            # h draws of a cluster of m units: h m draws of its units, with replacement.
            one_each = np.ones(m, dtype=np.int64)
            weights[:, edges[c] : edges[c + 1]] = draws.counts(one_each, rows, drawn[:, c] * m)
        chunks.append(weights)
    return chunks
