"""Published figures as ``Estimate``: value, interval, method, n, clusters, exclusions.

Every constructor here wraps the one bootstrap engine (:mod:`.bootstrap`) or the bounded
intervals of :mod:`.bounds` and never raises for too little data: below ``min_n`` items it
returns ``Estimate.insufficient`` with the reason, so a page prints "not enough data".
Proportions get the Wilson score interval on their effective sample size, chance-corrected
coefficients the hull of the bootstrap and the image of that interval (:mod:`.bounds`): no
figure's interval collapses to a point or leaves its range.

Kappas and shares are functions of per-item sums, so their intervals come from one matrix
product per chunk of resamples (:func:`.bootstrap.cluster_sum_distribution`); only statistics
that are not (Krippendorff's alpha) call a function once per resample.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.estimates import MIN_ITEMS, Estimate, Exclusion, Unit

from .agreement import (
    cohen_pair_codes,
    fleiss_item_sums,
)
from .bootstrap import joint_cluster_sum_distributions
from .bounds import (
    CLUSTER_WILSON,
    COEFFICIENT_HULL,
    DEFAULT_PRIOR_ICC,
    WILSON,
    coefficient_bounds,
    effective_size,
    proportion_bounds,
    proportion_sd,
)
from .coefficients import (
    Coefficient,
    cohen_coefficient,
    fleiss_coefficient,
)
from .percentiles import bootstrap_sd, percentile_interval

DEFAULT_RESAMPLES = 2_000
BOOTSTRAP = "percentile bootstrap"
CLUSTER_BOOTSTRAP = "cluster bootstrap"


class Resampling(TypedDict):
    """The bootstrap settings a caller hands every figure it makes (``**options``)."""

    n_resamples: int
    seed: int | None
    confidence: float
    over: str


# One label per item: a list, or an array (``len`` must give the number of items).
Labels = Sequence[Any] | NDArray[Any]


def _codes(clusters: ArrayLike | None, n: int) -> tuple[NDArray[np.intp], int]:
    if clusters is None:
        return np.arange(n), n
    arr = np.asarray(clusters)
    if arr.shape != (n,):
        raise ValueError(f"clusters must be 1-D with one label per item ({n}); got {arr.shape}")
    _, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    codes = codes.ravel().astype(np.intp)
    return codes, int(codes.max()) + 1 if n else 0


def _method(clusters: ArrayLike | None, over: str) -> str:
    return f"{CLUSTER_BOOTSTRAP} over {over}" if clusters is not None else BOOTSTRAP


def proportion_method(clusters: ArrayLike | None, over: str) -> str:
    return f"{CLUSTER_WILSON} over {over}" if clusters is not None else WILSON


def coefficient_method(clusters: ArrayLike | None, over: str) -> str:
    return f"{COEFFICIENT_HULL} ({_method(clusters, over)})"


def _cluster_sums(codes: NDArray[np.intp], g: int, columns: NDArray[np.float64]) -> NDArray:
    per_cluster = np.zeros((g, columns.shape[1]))
    np.add.at(per_cluster, codes, columns)
    return per_cluster


def sums_estimate(
    item_sums: ArrayLike,
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    clusters: ArrayLike | None = None,
    unit: Unit = "coefficient",
    over: str = "items",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_n: int = MIN_ITEMS,
    excluded: Iterable[Exclusion] = (),
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> Estimate:
    """A statistic of column sums over items, with a (cluster) bootstrap percentile interval.

    ``item_sums[i]`` are item ``i``'s contributions; ``statistic`` maps ``(rows, columns)``
    summed contributions to ``(rows,)`` values (``nan`` = undefined). The point value is the
    statistic of all items; resamples draw clusters (items when ``clusters`` is None). A
    :class:`Coefficient` gets the hull with its score interval; the proportions of this module
    (:func:`proportion_estimate`) the Wilson interval on the effective size, ``prior_icc``
    being the intra-cluster correlation the clusters' own is shrunk towards.
    """
    return sums_estimates(
        [(item_sums, statistic, unit)],
        clusters=clusters,
        over=over,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        min_n=min_n,
        excluded=excluded,
        prior_icc=prior_icc,
    )[0]


SumsStatistic = tuple[ArrayLike, Callable[[NDArray[np.float64]], NDArray[np.float64]], Unit]


def sums_estimates(
    parts: Sequence[SumsStatistic],
    *,
    clusters: ArrayLike | None = None,
    over: str = "items",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    min_n: int = MIN_ITEMS,
    excluded: Iterable[Exclusion] = (),
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> list[Estimate]:
    """:func:`sums_estimate` of several statistics (item sums, statistic, unit) of the same
    items and clusters: each is exactly its own call's estimate, while the clusters are drawn
    once for all of them (``stats.bootstrap.joint_cluster_sum_distributions``)."""
    kept = tuple(e for e in excluded if e.count)
    out: list[Estimate] = []
    resampled: list[tuple[int, NDArray[np.float64], Callable]] = []
    codes: NDArray[np.intp] | None = None
    for item_sums, statistic, unit in parts:
        sums = np.asarray(item_sums, dtype=np.float64)
        n = int(sums.shape[0])
        if codes is None:
            codes, g = _codes(clusters, n)
        elif codes.size != n:
            raise ValueError("every statistic needs one row of sums per item of the same items")
        if statistic is _ratio:
            method = proportion_method(clusters, over)
        elif isinstance(statistic, Coefficient):
            method = coefficient_method(clusters, over)
        else:
            method = _method(clusters, over)
        if n < min_n:
            out.append(
                Estimate.insufficient(n=n, n_clusters=g, unit=unit, method=method, excluded=kept)
            )
            continue
        total = sums.sum(axis=0)[None, :]
        value = float(np.asarray(statistic(total))[0])
        if not np.isfinite(value):
            out.append(
                Estimate.insufficient(
                    n=n,
                    n_clusters=g,
                    unit=unit,
                    method=method,
                    excluded=kept,
                    reason="undefined (no variation)",
                )
            )
            continue
        if statistic is _ratio:
            per_cluster = _cluster_sums(codes, g, sums)
            rate, low, high, size = proportion_bounds(
                per_cluster[:, 0], per_cluster[:, 1], prior_icc=prior_icc, confidence=confidence
            )
            sd = proportion_sd(rate, size)
            out.append(Estimate(rate, low, high, method, confidence, n, g, kept, unit, sd=sd))
            continue
        if isinstance(statistic, Coefficient):
            low, high = coefficient_interval(
                value, statistic, total, codes, prior_icc=prior_icc, confidence=confidence
            )
            out.append(Estimate(value, low, high, method, confidence, n, g, kept, unit, sd=None))
        else:
            out.append(Estimate(value, None, None, method, confidence, n, g, kept, unit, sd=None))
        if g >= 2:
            resampled.append((len(out) - 1, _cluster_sums(codes, g, sums), statistic))
    if resampled:
        dists = joint_cluster_sum_distributions(
            [r[1] for r in resampled],
            [r[2] for r in resampled],
            n_resamples=n_resamples,
            seed=seed,
        )
        for (i, _, statistic), dist in zip(resampled, dists, strict=True):
            lo, hi = (float(b) for b in percentile_interval(dist, confidence))
            score_low, score_high = out[i].low, out[i].high
            if (
                isinstance(statistic, Coefficient)
                and score_low is not None
                and score_high is not None
            ):
                # The score interval already drawn, hulled with the bootstrap's.
                lo, hi = max(-1.0, min(lo, score_low)), min(1.0, max(hi, score_high))
            sd = bootstrap_sd(dist)
            out[i] = replace(out[i], low=lo, high=hi, sd=sd if sd else None)
    return out


def coefficient_interval(
    value: float,
    coefficient: Coefficient,
    total: NDArray[np.float64],
    codes: NDArray[np.intp],
    *,
    bootstrap: tuple[float, float] | None = None,
    prior_icc: float = DEFAULT_PRIOR_ICC,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The bounds of a :class:`Coefficient` whose items sum to ``total`` (one row) and lie in
    clusters ``codes``: the image of the Wilson interval of its observed disagreement on the
    effective size, hulled with a ``bootstrap`` percentile interval (:mod:`.bounds`)."""
    d = coefficient.disagreement
    per_cluster = _cluster_sums(codes, int(codes.max()) + 1, np.column_stack([d, d * d]))
    sizes = np.bincount(codes).astype(np.float64)
    size = effective_size(per_cluster[:, 0], sizes, per_cluster[:, 1], prior_icc=prior_icc)
    return coefficient_bounds(
        value, coefficient.chance(total), size, bootstrap=bootstrap, confidence=confidence
    )


def proportion_from_clusters(
    passed: ArrayLike,
    n: ArrayLike,
    *,
    over: str,
    prior_icc: float = DEFAULT_PRIOR_ICC,
    confidence: float = 0.95,
    min_n: int = MIN_ITEMS,
    excluded: Iterable[Exclusion] = (),
) -> Estimate:
    """:func:`proportion_estimate` of 0/1 values already summed per cluster: ``passed[c]`` of
    ``n[c]`` in cluster ``c`` (for callers that count in the database)."""
    y = np.asarray(passed, dtype=np.float64).ravel()
    m = np.asarray(n, dtype=np.float64).ravel()
    total, g = int(m.sum()), int((m > 0).sum())
    kept = tuple(e for e in excluded if e.count)
    method = proportion_method(True, over)
    if total < min_n:
        return Estimate.insufficient(n=total, n_clusters=g, method=method, excluded=kept)
    rate, low, high, size = proportion_bounds(
        y[m > 0], m[m > 0], prior_icc=prior_icc, confidence=confidence
    )
    return Estimate(
        rate, low, high, method, confidence, total, g, kept, sd=proportion_sd(rate, size)
    )


def proportion_estimate(
    hits: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    over: str = "items",
    unit: Unit = "proportion",
    **options: Any,
) -> Estimate:
    """Share of true (1) values: pass rates, answer shares. The Wilson score interval, on the
    effective sample size when the values come in ``clusters`` (:mod:`.bounds`)."""
    x = np.asarray(hits, dtype=np.float64).reshape(-1)
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("a proportion needs booleans or 0/1 values")
    return sums_estimate(
        np.column_stack([x, np.ones_like(x)]),
        _ratio,
        clusters=clusters,
        unit=unit,
        over=over,
        **options,
    )


def _ratio(s: NDArray[np.float64]) -> NDArray[np.float64]:
    return s[:, 0] / s[:, 1]


def fleiss_estimate(
    counts: ArrayLike, clusters: ArrayLike | None = None, **options: Any
) -> Estimate:
    """Fleiss' kappa of ``counts[item, category]`` (same raters per item), bootstrap interval."""
    c = np.asarray(counts)
    if c.ndim != 2 or c.size == 0:
        return Estimate.insufficient(n=0, unit="coefficient")
    raters = c.sum(axis=1)
    if raters.min() < 2 or (raters != raters[0]).any():
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters for every item")
    sums = fleiss_item_sums(c)
    return sums_estimate(sums, fleiss_coefficient(sums), clusters=clusters, **options)


def cohen_estimate(
    a: Labels,
    b: Labels,
    clusters: ArrayLike | None = None,
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    **options: Any,
) -> Estimate:
    """Cohen's kappa of two label sequences with a bootstrap interval over items."""
    if len(a) != len(b):
        raise ValueError("a and b must have the same length")
    if not len(a):
        return Estimate.insufficient(n=0, unit="coefficient")
    pair, k = cohen_pair_codes(np.asarray(a), np.asarray(b))
    if k < 2:
        return Estimate.insufficient(
            n=len(a), unit="coefficient", reason="undefined (no variation)"
        )
    onehot = np.zeros((len(pair), k * k))
    onehot[np.arange(len(pair)), pair] = 1.0
    return sums_estimate(onehot, cohen_coefficient(pair, k, weights), clusters=clusters, **options)


def agreement_estimates(
    a: Labels,
    b: Labels,
    clusters: ArrayLike | None = None,
    **options: Any,
) -> tuple[Estimate, Estimate]:
    """Percent agreement and Cohen's kappa of two label sequences, each exactly as
    :func:`proportion_estimate` of ``a == b`` and :func:`cohen_estimate` give it, from one
    drawing of the clusters for both."""
    if len(a) != len(b):
        raise ValueError("a and b must have the same length")
    x, y = np.asarray(a), np.asarray(b)
    agreed = (x == y).astype(np.float64)
    pair, k = cohen_pair_codes(x, y) if len(x) else (None, 0)
    if pair is None or k < 2:
        # No kappa to draw: each figure on its own (the kappa says why it has no value).
        return (
            proportion_estimate(agreed, clusters, **options),
            cohen_estimate(a, b, clusters, **options),
        )
    onehot = np.zeros((len(pair), k * k))
    onehot[np.arange(len(pair)), pair] = 1.0
    agreement, kappa = sums_estimates(
        [
            (np.column_stack([agreed, np.ones_like(agreed)]), _ratio, "proportion"),
            (onehot, cohen_coefficient(pair, k, None), "coefficient"),
        ],
        clusters=clusters,
        **options,
    )
    return agreement, kappa


def share_estimates(
    answers: Sequence[Any],
    choices: Sequence[Any],
    clusters: ArrayLike | None = None,
    **options: Any,
) -> dict[Any, Estimate]:
    """Share of each choice among ``answers`` (e.g. agree / disagree / unsure), each with its
    bootstrap interval; ``clusters`` groups answers given to the same item."""
    arr = np.asarray(list(answers), dtype=object)
    # One drawing of the clusters serves every choice (each share as on its own).
    ones = np.ones(arr.size)
    estimates = sums_estimates(
        [
            (np.column_stack([(arr == choice).astype(float), ones]), _ratio, "proportion")
            for choice in choices
        ],
        clusters=clusters,
        **options,
    )
    return dict(zip(choices, estimates, strict=True))
