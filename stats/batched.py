"""Bootstrap figures of many data sets at once, for refreshing thousands of figures per run.

The resamples come from the one engine (:mod:`.resampling`), drawn once per number of clusters
(or per cluster shape) with the given seed and shared by every data set of that number: common
random numbers. What each data set then gets is exactly what it gets on its own with that
seed from :func:`.cluster_sum_distribution` and :func:`.two_stage_sum_distribution` (the same
draws, up to the order of additions), and from :func:`clustered_mean_intervals` the percentile
interval of its clusters resampled in the order its signature lists them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .bootstrap import _chunks, _cluster_codes
from .quantiles import lerp, linear_neighbours
from .resampling import Draws, block_hits
from .two_stage import two_stage_weights


def shared_block_hits(
    g: int, edges: ArrayLike, n_resamples: int = 10_000, seed: int | None = 0
) -> NDArray[np.float64]:
    """The draws :func:`clustered_mean_intervals` makes for g clusters with ``seed``, as counts
    per block of clusters cut at ``edges``: :func:`.resampling.block_hits`."""
    return block_hits(g, edges, n_resamples, seed)


# Order statistics are found by counting each distribution into this many buckets: a tail's
# bucket then holds a few dozen of its 10,000 resampled means (fewer buckets: more to select
# from; more: a longer count to walk; timed).
_BUCKETS = 256
# Numbers of clusters are resampled in parallel (the kernels release the GIL); each has its own
# seeded generator, so the figures do not depend on the number of threads.
_THREADS = min(2, os.cpu_count() or 1)


def clustered_mean_intervals(
    signatures: list[tuple[tuple[int, int, int], ...]],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile cluster-bootstrap intervals of the mean for many data sets, with common
    random numbers: one resampling per number of clusters, shared by every data set with it.

    Each signature lists its clusters as ``(sum, size, count)`` kinds (``count`` clusters of that
    sum and size), numbered in that order. The data sets with g clusters share one draw of
    ``n_resamples`` resamples of g clusters by the engine (:func:`shared_block_hits`, seeded with
    ``seed``, cut at every kind boundary any of them has), so each interval is
    :func:`bootstrap_ci` of its values with those hits (``bootstrap_ci(..., hits=...)``), and
    within Monte Carlo error of ``bootstrap_ci(values, clusters, seed=seed)`` (the very interval,
    for a signature listing its kinds in sorted order while the engine counts its draws one by
    one, as it does for few clusters a kind: below ``resampling._SPLIT_SUMMED_DRAWS`` on
    average). Fewer than two clusters: ``nan``.
    """
    from . import _kernels  # numba: imported when first needed, not at Django's start-up

    tail = (1.0 - confidence) / 2.0
    previous, following, gamma = linear_neighbours(n_resamples, np.array([tail, 1.0 - tail]))
    ranks = np.unique(np.concatenate([previous, following]))
    low = np.full(len(signatures), np.nan)
    high = np.full(len(signatures), np.nan)
    by_g: dict[int, list[int]] = {}
    kinds_of = []
    for row, signature in enumerate(signatures):
        kinds = np.array(signature, dtype=np.int64).reshape(-1, 3)
        kinds_of.append(kinds)
        g = int(kinds[:, 2].sum())
        if g >= 2:
            by_g.setdefault(g, []).append(row)

    def intervals(g: int) -> None:
        rows = sorted(by_g[g], key=lambda r: len(kinds_of[r]))  # loops of one length in a run
        kinds = np.concatenate([kinds_of[r] for r in rows])
        lengths = [len(kinds_of[r]) for r in rows]
        # The kind ends of data set j (1..g), shifted by j (g + 1): one sorted array for all.
        # (The running count of all kinds is j g plus the set's own.)
        ends = np.cumsum(kinds[:, 2]) + np.repeat(np.arange(len(rows)), lengths)
        ends %= g + 1
        cuts = np.concatenate([[0], np.unique(ends)])
        set_start = np.concatenate([[0], np.cumsum(lengths)])
        # A set's sum in a resample: its kinds' sums times their draws, or, summed by parts,
        # each kind's sum less the next one's times the draws up to its end (one gather each).
        steps = kinds[:, :2].copy()
        steps[:-1] -= kinds[1:, :2]
        steps[set_start[1:] - 1] = kinds[set_start[1:] - 1, :2]
        if np.abs(kinds[:, :2]).max(initial=0) * 2 * g >= 2**53:
            raise ValueError("cluster sums and sizes too large to be added exactly")
        steps = steps.astype(np.float64)
        sets = (np.searchsorted(cuts, ends), steps[:, 0].copy(), steps[:, 1].copy(), set_start)
        dist = Draws(seed).means(g, cuts, n_resamples, sets)
        # A size of 0 or less can make a mean non-finite: np.quantile's own answer for those.
        finite = np.minimum.reduceat(kinds[:, 1], set_start[:-1]) > 0
        if not finite.all():
            low[rows], high[rows] = np.quantile(dist, [tail, 1.0 - tail], axis=1)
            rows, dist = [r for r, f in zip(rows, finite, strict=True) if f], dist[finite]
        at = np.empty((len(rows), ranks.size))
        _kernels.order_statistics(dist, ranks, _BUCKETS, at)
        a = at[:, np.searchsorted(ranks, previous)]
        b = at[:, np.searchsorted(ranks, following)]
        low[rows], high[rows] = lerp(a, b, gamma).T

    # The longest first: a g-group costs g draws a resample, and a data set's order statistics
    # about as much as three more.
    order = sorted(by_g, key=lambda g: -(g + 3 * len(by_g[g])))
    if _THREADS > 1 and len(order) > 1:
        with ThreadPoolExecutor(_THREADS) as pool:
            list(pool.map(intervals, order))
    else:
        for g in order:
            intervals(g)
    return low, high


def cluster_sum_distributions(
    sums_list: list[NDArray[np.float64]],
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> list[NDArray[np.float64]]:
    """:func:`cluster_sum_distribution` of many data sets, each exactly as on its own.

    A data set's resampling depends only on its number of clusters and the seed, so the hit
    matrices are drawn once per number of clusters (the same chunks from the same stream as on
    its own) and shared. ``statistic`` must treat each row on its own (it is called once, on
    every data set's resampled sums stacked).
    """
    hits_by_g: dict[int, list[NDArray[np.float64]]] = {}
    resampled = []
    for sums in sums_list:
        sums = np.asarray(sums, dtype=np.float64)
        g = sums.shape[0]
        if g < 2:
            raise ValueError(f"cluster bootstrap needs at least two clusters; got {g}")
        if g not in hits_by_g:
            draws, each = Draws(seed), np.ones(g, dtype=np.int64)
            hits_by_g[g] = [draws.counts(each, rows) for _, rows in _chunks(n_resamples, g)]
        flat = sums.reshape(g, -1)
        parts = [(hits @ flat).reshape((hits.shape[0], *sums.shape[1:])) for hits in hits_by_g[g]]
        resampled.append(np.concatenate(parts, axis=0))
    if not resampled:
        return []
    values = np.asarray(statistic(np.concatenate(resampled, axis=0)), dtype=np.float64)
    return np.split(values, len(resampled), axis=0)


def two_stage_sum_distributions(
    unit_sums_list: list[NDArray[np.float64]],
    clusters_list: list[ArrayLike],
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> list[NDArray[np.float64]]:
    """:func:`two_stage_sum_distribution` of many data sets, each as on its own.

    A data set's weights depend only on its cluster sizes (in label order) and the seed, so
    they are drawn once per shape and one product serves every data set of that shape.
    ``statistic`` must treat each row on its own (it is called once, on all rows stacked).
    """
    shapes: dict[tuple[int, ...], list[int]] = {}
    ordered = []
    for i, (unit_sums, clusters) in enumerate(zip(unit_sums_list, clusters_list, strict=True)):
        sums = np.asarray(unit_sums, dtype=np.float64)
        if sums.ndim != 2 or sums.shape[0] < 2:
            raise ValueError("the two-stage bootstrap needs at least two units")
        codes, g = _cluster_codes(clusters, sums.shape[0])
        ordered.append(sums[np.argsort(codes, kind="stable")])
        shapes.setdefault(tuple(np.bincount(codes, minlength=g).tolist()), []).append(i)
    resampled: dict[int, NDArray[np.float64]] = {}
    for sizes, members in shapes.items():
        stacked = np.concatenate([ordered[i] for i in members], axis=1)
        cols = [ordered[i].shape[1] for i in members]
        parts = [weights @ stacked for weights in two_stage_weights(sizes, n_resamples, seed)]
        whole = np.concatenate(parts, axis=0)
        for i, block in zip(members, np.split(whole, np.cumsum(cols)[:-1], axis=1), strict=True):
            resampled[i] = block
    if not resampled:
        return []
    stacked_all = np.concatenate([resampled[i] for i in range(len(ordered))], axis=0)
    values = np.asarray(statistic(stacked_all), dtype=np.float64)
    return np.split(values, len(resampled), axis=0)
