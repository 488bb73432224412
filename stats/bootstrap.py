"""Percentile bootstrap intervals, plain or clustered, and the distributions behind them.

Every resample is drawn by the one engine, :mod:`.resampling`, as counts: per distinct value,
per kind of cluster or per cluster, whichever describes the resample with the fewest numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._inputs import _CHUNK_ELEMENTS, _finite_1d
from .resampling import Draws

Statistic = Literal["mean", "median"] | Callable[[NDArray[np.float64]], float]

# --------------------------------------------------------------------------------------------
# Bootstrap intervals
# --------------------------------------------------------------------------------------------


def _rows_per_chunk(width: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(width, 1))


def _median_from_histogram(
    hist: NDArray[np.float64], support: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Median of each row's multiset, given counts ``hist[r, j]`` of sorted ``support[j]``."""
    cum = np.cumsum(hist, axis=1)
    total = cum[:, -1]
    lo_rank = np.floor((total - 1) / 2)[:, None]  # 0-based ranks of the middle element(s)
    hi_rank = np.floor(total / 2)[:, None]
    lo = (cum <= lo_rank).sum(axis=1)
    hi = (cum <= hi_rank).sum(axis=1)
    return (support[lo] + support[hi]) / 2.0


def _chunks(n_resamples: int, width: int) -> Iterator[tuple[int, int]]:
    """Row counts of memory-bounded chunks of an ``(n_resamples, width)`` matrix."""
    step = _rows_per_chunk(width)
    for start in range(0, n_resamples, step):
        yield start, min(step, n_resamples - start)


def _bootstrap_unclustered(
    x: NDArray[np.float64], n_resamples: int, statistic: str, draws: Draws
) -> NDArray[np.float64]:
    # A resample is fully described by how often each distinct value was drawn: the engine
    # counts the n draws per distinct value (binary outcomes, Likert scores: a handful).
    n = x.size
    support, freq = np.unique(x, return_counts=True)
    if statistic == "median":
        # Only the middle pair of each resample matters: found by binomial splits of the
        # support, O(log n) a resample however many distinct values there are.
        low, high = draws.median_positions(n, freq, ((n - 1) // 2, n // 2), n_resamples)
        return (support[low] + support[high]) / 2.0
    out = np.empty(n_resamples)
    for start, rows in _chunks(n_resamples, support.size):
        out[start : start + rows] = draws.sums(freq, support[:, None], rows)[:, 0] / n
    return out


def _bootstrap_clustered(
    x: NDArray[np.float64],
    cluster: NDArray[np.intp],
    n_clusters: int,
    n_resamples: int,
    statistic: str,
    draws: Draws,
) -> NDArray[np.float64]:
    g = n_clusters
    if statistic == "mean":
        sizes = np.bincount(cluster, minlength=g).astype(np.float64)
        # Weighted counts are float64 (numpy's stub gives every bincount intp).
        sums = cast("NDArray[np.float64]", np.bincount(cluster, weights=x, minlength=g))
        return _clustered_mean_distribution(sums, sizes, n_resamples, draws)
    out = np.empty(n_resamples)

    # Median: the resample is the multiset union of the drawn clusters. Describe every cluster
    # by its histogram over the distinct values; the resample's histogram is then
    # (draws per kind of cluster) @ (the kinds' histograms). Too many distinct values for a
    # dense histogram -> use each observation as its own support point, weighted by its
    # cluster's draws.
    support, value_code = np.unique(x, return_inverse=True)
    if g * support.size <= _CHUNK_ELEMENTS:
        hist = np.bincount(cluster * support.size + value_code, minlength=g * support.size).reshape(
            g, support.size
        )
        kinds, freq = np.unique(hist, axis=0, return_counts=True)
        profile = kinds.astype(np.float64)
        for start, rows in _chunks(n_resamples, max(profile.shape[0], support.size)):
            hits = draws.counts(freq, rows)
            out[start : start + rows] = _median_from_histogram(hits @ profile, support)
        return out

    order = np.argsort(x, kind="stable")
    sorted_x, sorted_cluster = x[order], cluster[order]
    each = np.ones(g, dtype=np.int64)
    for start, rows in _chunks(n_resamples, max(x.size, g)):
        hits = draws.counts(each, rows)
        out[start : start + rows] = _median_from_histogram(hits[:, sorted_cluster], sorted_x)
    return out


def _clustered_mean_distribution(
    sums: NDArray[np.float64],
    sizes: NDArray[np.float64],
    n_resamples: int,
    draws: Draws,
) -> NDArray[np.float64]:
    """Resampled means of the cluster bootstrap, from each cluster's (sum, size)."""
    out = np.empty(n_resamples)
    # The resampled mean depends on the drawn clusters only through their (sum, size), so
    # clusters sharing both are interchangeable: 8,090 clusters of six binary outcomes
    # collapse to 7 kinds, and the engine counts each resample's draws per kind. (Numbered
    # by kind, the clusters' own order does not matter.)
    kinds, freq = np.unique(np.column_stack([sums, sizes]), axis=0, return_counts=True)
    for start, rows in _chunks(n_resamples, kinds.shape[0]):
        drawn = draws.sums(freq, kinds, rows)
        out[start : start + rows] = drawn[:, 0] / drawn[:, 1]
    return out


def _bootstrap_callable(
    x: NDArray[np.float64],
    cluster: NDArray[np.intp] | None,
    n_clusters: int,
    n_resamples: int,
    func: Callable[[NDArray[np.float64]], float],
    draws: Draws,
) -> NDArray[np.float64]:
    out = np.empty(n_resamples)
    each = np.ones(x.size if cluster is None else n_clusters, dtype=np.int64)
    for start, rows in _chunks(n_resamples, each.size):
        hits = draws.counts(each, rows).astype(np.intp)
        for r in range(rows):
            # Every value once per draw of it (or of its cluster).
            times = hits[r] if cluster is None else hits[r][cluster]
            out[start + r] = float(func(np.repeat(x, times)))
    return out


def _cluster_codes(clusters: ArrayLike, n: int) -> tuple[NDArray[np.intp], int]:
    arr = np.asarray(clusters)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"clusters must be 1-D with one label per value ({n}); got {arr.shape}")
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError:
        # Unorderable labels (e.g. ints and strings mixed): number them by first appearance.
        index: dict[Hashable, int] = {}
        codes = np.array([index.setdefault(label, len(index)) for label in arr.tolist()])
    codes = codes.astype(np.intp).ravel()
    return codes, int(codes.max()) + 1


def bootstrap_ci(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    statistic: Statistic = "mean",
    *,
    hits: ArrayLike | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval (Efron & Tibshirani 1993), optionally by cluster.

    Without ``clusters`` the ``n`` values are resampled with replacement ``n_resamples`` times.
    With ``clusters`` (one label per value) whole clusters are resampled with replacement -- the
    cluster bootstrap (Davison & Hinkley 1997, sec. 3.8), needed when values within a cluster
    (e.g. the variants of one base scenario) are not independent -- and the statistic is taken
    over all values of the drawn clusters: for the mean, ``sum of drawn cluster sums / sum of
    drawn cluster sizes``. The interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) /
    2`` quantiles (linear interpolation) of the resampled statistics.

    ``statistic`` is ``"mean"``, ``"median"`` (both vectorized: each resample is drawn by the
    engine of :mod:`.resampling` as counts per distinct value or per kind of cluster, in
    memory-bounded chunks) or a callable on a 1-D array (one call per resample; slower).
    Deterministic for a given ``seed`` (``np.random.SeedSequence(seed)`` seeds the engine's
    generator). Constant values give
    ``(c, c)``. Raises ``ValueError`` for fewer than two values or clusters, non-finite values,
    mismatched ``clusters``, ``n_resamples < 1`` or ``confidence`` outside (0, 1).

    ``hits`` (clustered mean only): the resamples given instead of drawn, as an
    ``(n_resamples, n_clusters)`` matrix of how often each cluster (in sorted label order) is
    drawn -- common random numbers shared by many data sets with the same number of clusters.
    """
    x = _finite_1d(values, "values")
    if x.size < 2:
        raise ValueError(f"bootstrap needs at least two values; got {x.size}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    n_resamples = int(n_resamples)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1; got {confidence!r}")
    dist = bootstrap_distribution(values, clusters, n_resamples, seed, statistic, hits=hits)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_distribution(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    statistic: Statistic = "mean",
    *,
    hits: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """The resampled statistics behind :func:`bootstrap_ci` (same engine, same checks), for
    figures that also report the bootstrap standard deviation."""
    x = _finite_1d(values, "values")
    if x.size < 2:
        raise ValueError(f"bootstrap needs at least two values; got {x.size}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    n_resamples = int(n_resamples)
    if not callable(statistic) and statistic not in ("mean", "median"):
        raise ValueError(f"statistic must be 'mean', 'median' or a callable; got {statistic!r}")
    cluster: NDArray[np.intp] | None = None
    n_clusters = 0
    if clusters is not None:
        cluster, n_clusters = _cluster_codes(clusters, x.size)
        if n_clusters < 2:
            raise ValueError(f"cluster bootstrap needs at least two clusters; got {n_clusters}")

    if hits is not None:
        counts = np.asarray(hits, dtype=np.float64)
        if cluster is None or statistic != "mean" or counts.shape != (n_resamples, n_clusters):
            raise ValueError(
                "hits are the clustered mean's resamples: (n_resamples, n_clusters) counts"
            )
        sums = np.bincount(cluster, weights=x, minlength=n_clusters)
        sizes = np.bincount(cluster, minlength=n_clusters).astype(np.float64)
        return (counts @ sums) / (counts @ sizes)
    draws = Draws(seed)
    if callable(statistic):
        return _bootstrap_callable(x, cluster, n_clusters, n_resamples, statistic, draws)
    if cluster is None:
        return _bootstrap_unclustered(x, n_resamples, statistic, draws)
    return _bootstrap_clustered(x, cluster, n_clusters, n_resamples, statistic, draws)


def clustered_mean_ci(
    sums: ArrayLike,
    sizes: ArrayLike,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[float, float]:
    """:func:`bootstrap_ci` of the mean with clusters, from each cluster's sum and size instead
    of the values: the same interval (the same draws of the same engine), without the values
    ever leaving the database's GROUP BY."""
    sums = _finite_1d(sums, "sums")
    sizes = _finite_1d(sizes, "sizes")
    if sums.size < 2 or sizes.size != sums.size:
        raise ValueError("need one sum and one size for each of at least two clusters")
    tail = (1.0 - confidence) / 2.0
    dist = _clustered_mean_distribution(sums, sizes, n_resamples, Draws(seed))
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    return float(low), float(high)


def pass_rate_ci(
    passed: ArrayLike,
    clusters: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> dict[str, float | int]:
    """Pass rate of binary outcomes with its (cluster) bootstrap percentile interval.

    ``passed`` holds booleans or 0/1. Returns ``{"pass_rate", "ci_low", "ci_high", "n",
    "n_clusters", "confidence"}`` (``n_clusters`` = ``n`` without clusters). Errors as in
    :func:`bootstrap_ci`, plus ``ValueError`` for values other than 0/1.
    """
    x = _finite_1d(passed, "passed")
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("passed must hold only booleans or 0/1")
    low, high = bootstrap_ci(x, clusters, n_resamples, confidence, seed, "mean")
    n_clusters = x.size if clusters is None else _cluster_codes(clusters, x.size)[1]
    return {
        "pass_rate": float(x.mean()),
        "ci_low": low,
        "ci_high": high,
        "n": int(x.size),
        "n_clusters": int(n_clusters),
        "confidence": float(confidence),
    }


# --------------------------------------------------------------------------------------------
# Statistics of cluster sums (kappas, differences, weighted scores under one resample)
# --------------------------------------------------------------------------------------------
# Every statistic below is a function of per-cluster sums, so a resample is fully described by
# how often each cluster was drawn: the resampled sums are (hits @ sums), one matrix product.


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
    return joint_cluster_sum_distributions([sums], [statistic], n_resamples=n_resamples, seed=seed)[
        0
    ]


def joint_cluster_sum_distributions(
    sums: Sequence[NDArray[np.float64]],
    statistics: Sequence[Callable[[NDArray[np.float64]], NDArray[np.float64]]],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> list[NDArray[np.float64]]:
    """:func:`cluster_sum_distribution` of several statistics of the same clusters under the
    same resamples: each chunk's cluster counts are drawn once and serve every statistic. Each
    distribution is exactly the one its own call would give (the same draws, the same product
    of the same shapes), for the cost of one drawing instead of one per statistic."""
    arrays = [np.asarray(s, dtype=np.float64) for s in sums]
    g = arrays[0].shape[0]
    if g < 2:
        raise ValueError(f"cluster bootstrap needs at least two clusters; got {g}")
    if any(a.shape[0] != g for a in arrays):
        raise ValueError("every statistic's sums need one row per cluster of the same clusters")
    flats = [a.reshape(g, -1) for a in arrays]
    # Counts (0/1 items summed per cluster) times counts of draws are whole numbers far below
    # 2**53: every order of additions gives them exactly, so one product over all the columns
    # reads the hit matrix once and still gives each statistic its own sums to the last bit.
    whole = len(flats) > 1 and all(_whole_numbers(flat, g) for flat in flats)
    joined = np.concatenate(flats, axis=1) if whole else None
    edges = np.cumsum([0] + [flat.shape[1] for flat in flats])
    parts: list[list[NDArray[np.float64]]] = [[] for _ in arrays]
    for hits in _hit_chunks(g, n_resamples, seed):
        rows = hits.shape[0]
        product = None if joined is None else hits @ joined
        for i, (a, statistic, out) in enumerate(zip(arrays, statistics, parts, strict=True)):
            summed = hits @ flats[i] if product is None else product[:, edges[i] : edges[i + 1]]
            resampled = summed.reshape((rows, *a.shape[1:]))
            out.append(np.asarray(statistic(resampled), dtype=np.float64))
    return [np.concatenate(out, axis=0) for out in parts]


def cluster_hits(g: int, n_resamples: int, seed: int | None = 0) -> NDArray[np.float64]:
    """``(n_resamples, g)``: how often each of ``g`` clusters is drawn in each resample, the
    very draws :func:`joint_cluster_sum_distributions` makes for ``g`` clusters and this seed.
    Statistics of many groups that have ``g`` clusters each (a release's metric x model cells)
    can then share one drawing and one batched product, each group's distribution exactly its
    own call's."""
    if g < 2:
        raise ValueError(f"cluster bootstrap needs at least two clusters; got {g}")
    return np.concatenate(list(_hit_chunks(g, n_resamples, seed)))


def _hit_chunks(g: int, n_resamples: int, seed: int | None) -> Iterator[NDArray[np.float64]]:
    """The cluster counts of ``n_resamples`` resamples of ``g`` clusters, a memory-bounded chunk
    of rows at a time, from one generator seeded with ``seed``."""
    draws = Draws(seed)
    each = np.ones(g, dtype=np.int64)
    for _, rows in _chunks(n_resamples, g):
        yield draws.counts(each, rows)


def _whole_numbers(flat: NDArray[np.float64], g: int) -> bool:
    """Whether every resampled sum of ``flat`` (g draws of its rows) is an exact float."""
    if not np.isfinite(flat).all() or (flat != np.round(flat)).any():
        return False
    return float(np.abs(flat).max(initial=0.0)) * g < 2.0**52
