"""The bootstrap engine run over many data sets at once, each giving exactly the interval it
gets on its own (same generator, same draws): for refreshing thousands of figures per run."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import ThreadpoolController

from ._inputs import _finite_1d
from .bootstrap import (
    _cluster_codes,
    _clustered_mean_distribution,
    _rows_per_chunk,
    cluster_hits,
)
from .quantiles import quantile_rows
from .two_stage import two_stage_weights


def clustered_mean_ci(
    sums: ArrayLike,
    sizes: ArrayLike,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[float, float]:
    """:func:`bootstrap_ci` of the mean with clusters, from each cluster's sum and size (in the
    order of the clusters' sorted labels) instead of the values: the same interval, without
    the values ever leaving the database's GROUP BY."""
    sums = _finite_1d(sums, "sums")
    sizes = _finite_1d(sizes, "sizes")
    if sums.size < 2 or sizes.size != sums.size:
        raise ValueError("need one sum and one size for each of at least two clusters")
    tail = (1.0 - confidence) / 2.0
    dist = _clustered_mean_distribution(sums, sizes, n_resamples, np.random.default_rng(seed))
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    return float(low), float(high)


def shared_block_hits(
    g: int, edges: ArrayLike, n_resamples: int = 10_000, seed: int | None = 0
) -> NDArray[np.float64]:
    """One cluster bootstrap of g clusters, as counts per block: ``(n_resamples, blocks)``.

    Clusters are numbered 0..g-1 and cut into consecutive blocks at ``edges`` (0 < e < g); row r
    counts how many of resample r's g draws (uniform, with replacement) land in each block: a
    multinomial, drawn as one (O(blocks) a row) or by binning drawn cluster indices (O(g) a
    row), whichever is cheaper for the number of clusters a block.
    """
    cuts = np.unique(np.concatenate([[0, g], np.asarray(edges, dtype=np.int64)]))
    if cuts[0] != 0 or cuts[-1] != g:
        raise ValueError(f"edges must lie within 0..{g}")
    rng = np.random.default_rng(seed)
    blocks = cuts.size - 1
    if g > 16 * blocks or g > _WORD // 2:
        return rng.multinomial(g, np.diff(cuts) / g, size=n_resamples).astype(np.float64)
    # Under ~16 clusters a block (timed), binning drawn cluster indices beats the binomials.
    # Indices come as 16-bit words of the generator's raw output: word w is cluster w % g
    # unless w falls in the incomplete last cycle (then redrawn), so every cluster has the same
    # chance. One lookup gives the block and 16-bit counting keys, in cache-sized chunks.
    block_of = np.repeat(np.arange(blocks, dtype=np.uint16), np.diff(cuts))
    cycles = _WORD // g
    width = blocks + 1  # the last column counts the words to redraw
    lookup = np.full(_WORD, blocks, np.uint16)
    lookup[: cycles * g] = np.tile(block_of, cycles)
    out = np.empty((n_resamples, blocks))
    step = max(1, min(_BINNING_CHUNK // g, (_WORD - 1) // width))
    offsets = (np.arange(step, dtype=np.uint16) * width)[:, None]
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        draws = rows * g
        words = rng.bit_generator.random_raw(-(-draws // 4)).view(np.uint16)[:draws]
        keys = lookup[words.reshape(rows, g)]
        keys += offsets[:rows]
        counts = np.bincount(keys.ravel(), minlength=rows * width).reshape(rows, width)
        redraw = counts[:, blocks]
        if redraw.any():
            again = block_of[rng.integers(0, g, size=int(redraw.sum()))]
            np.add.at(counts, (np.repeat(np.arange(rows), redraw), again), 1)
        out[start : start + rows] = counts[:, :blocks]
    return out


_WORD = 1 << 16
_BINNING_CHUNK = 1 << 16
# Numbers of clusters are resampled in parallel; each has its own seeded generator, so the
# figures do not depend on the number of threads.
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
    ``n_resamples`` resamples of g clusters (:func:`shared_block_hits`, seeded with ``seed``, cut
    at every kind boundary any of them has), so each interval is :func:`bootstrap_ci` of its
    values with those hits (``bootstrap_ci(..., hits=...)``): the same percentile bootstrap with
    the same number of resamples as drawing each data set alone, and differing from that only by
    Monte Carlo error. Fewer than two clusters: ``nan``.
    """
    tail = (1.0 - confidence) / 2.0
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
        rows = by_g[g]
        kinds = np.concatenate([kinds_of[r] for r in rows])
        lengths = [len(kinds_of[r]) for r in rows]
        # The kind ends of data set j (1..g), shifted by j (g + 1): one sorted array for all.
        # (The running count of all kinds is j g plus the set's own.)
        ends = np.cumsum(kinds[:, 2]) + np.repeat(np.arange(len(rows)), lengths)
        cuts = np.concatenate([[0], np.unique(ends % (g + 1))])
        hits = shared_block_hits(g, cuts[1:-1], n_resamples, seed)
        # Each block lies within one kind of every data set: its sum and size per draw.
        shifted = cuts[None, :-1] + (np.arange(len(rows)) * (g + 1))[:, None]
        kind = np.searchsorted(ends, shifted, side="right")
        sums = kinds[kind, 0].astype(np.float64)
        sizes = kinds[kind, 1].astype(np.float64)
        # One data set a row (integer counts: the products are exact in any order).
        dist = sums @ hits.T
        dist /= sizes @ hits.T
        low[rows], high[rows] = quantile_rows(dist, [tail, 1.0 - tail])

    order = sorted(by_g, key=lambda g: -len(by_g[g]) * g)  # the longest first
    # BLAS's own threads would only spin against these (they cost 2.5x the CPU time).
    with _blas_limit():
        if _THREADS > 1 and len(order) > 1:
            with ThreadPoolExecutor(_THREADS) as pool:
                list(pool.map(intervals, order))
        else:
            for g in order:
                intervals(g)
    return low, high


@functools.cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def _blas_limit() -> AbstractContextManager:
    """One BLAS thread for the small products of the batched bootstrap."""
    return _blas_controller().limit(limits=1, user_api="blas")


def cluster_sum_distributions(
    sums_list: list[NDArray[np.float64]],
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> list[NDArray[np.float64]]:
    """:func:`cluster_sum_distribution` of many data sets, each exactly as on its own.

    A data set's resampling depends only on its number of clusters and the seed, so the hit
    matrices are drawn once per number of clusters and shared. ``statistic`` must treat each
    row on its own (it is called once, on every data set's resampled sums stacked).
    """
    hits_by_g: dict[int, list[NDArray[np.float64]]] = {}
    resampled = []
    for sums in sums_list:
        sums = np.asarray(sums, dtype=np.float64)
        g = sums.shape[0]
        if g < 2:
            raise ValueError(f"cluster bootstrap needs at least two clusters; got {g}")
        if g not in hits_by_g:
            rng = np.random.default_rng(seed)
            step = _rows_per_chunk(g)
            hits_by_g[g] = [
                cluster_hits(rng, g, min(step, n_resamples - start))
                for start in range(0, n_resamples, step)
            ]
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
    resampled: list[NDArray[np.float64] | None] = [None] * len(ordered)
    for sizes, members in shapes.items():
        stacked = np.concatenate([ordered[i] for i in members], axis=1)
        cols = [ordered[i].shape[1] for i in members]
        parts = [weights @ stacked for weights in two_stage_weights(sizes, n_resamples, seed)]
        whole = np.concatenate(parts, axis=0)
        for i, block in zip(members, np.split(whole, np.cumsum(cols)[:-1], axis=1), strict=True):
            resampled[i] = block
    if not resampled:
        return []
    values = np.asarray(statistic(np.concatenate(resampled, axis=0)), dtype=np.float64)
    return np.split(values, len(resampled), axis=0)
