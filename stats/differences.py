"""Paired differences of pass rates between models that answered the same scenarios.

Every model of a run meets the same base scenarios, so the difference of two models' rates is
estimated on the scenarios they share: a hard scenario lowers both rates and cancels from the
difference. Two models' intervals overlapping is therefore no evidence that they do not differ
(the difference's own interval can exclude zero while the two rates' intervals overlap), and
chaining models while neighbouring intervals overlap is not transitive: 10 models 22 points
apart can form one "group".

Each rate is a ratio ``sum(passed) / sum(n)`` over clusters (base scenarios) within strata
(metrics: fixed, their base scenarios a sample). Its linearisation ``e_ck = (passed_ck - p_k
n_ck) / N_k`` gives the stratified cluster-robust covariance of all the rates at once, on
``sum_h (G_h - 1)`` degrees of freedom; a pair's difference takes the difference of the two
residuals, so the pairing is in the covariance. The intervals hold *simultaneously* over all
pairs: the critical value is the 95th percentile of the largest |t| among all pairs under
their joint (multivariate t) distribution -- the max-t method (Hothorn, Bretz & Westfall 2008)
-- drawn from a seeded generator.

The published bounds are not ``difference +- q se``, which with few clusters reaches past what
two rates can differ by and collapses when both models pass everything: they are Newcombe's
hybrid score interval (:func:`.bounds.newcombe_difference`) from each rate's Wilson interval
at the same critical value ``q`` on its effective size ``p (1 - p) / variance`` (at least the
binomial variance's; a rate at 0 % or 100 % takes the median design effect of the others, or
counts each cluster once) and the pair's correlation. In [-1, 1] by construction, apart
whenever one rate has room to move, and equal to the t interval to first order in between.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from .bounds import NEWCOMBE, newcombe_difference
from .estimates import MIN_ITEMS, Estimate, Exclusion

PAIRED_DIFFERENCE = (
    "paired difference over shared base scenarios (stratified by metric), Newcombe's hybrid "
    "score interval on effective sizes, simultaneous over all pairs (max-t)"
)
_MAX_T_DRAWS = 20_000


@dataclass(frozen=True)
class PairedDifferences:
    """The rates of ``k`` models and every pair's difference ``rate_i - rate_j`` (i < j)."""

    rates: NDArray[np.float64]
    n: NDArray[np.float64]
    pairs: list[tuple[int, int]]
    difference: NDArray[np.float64]
    se: NDArray[np.float64]
    df: float
    pointwise: float  # t quantile for one pair on its own
    simultaneous: float  # max-t critical value over all pairs
    n_clusters: int
    confidence: float
    effective: NDArray[np.float64]  # each rate's effective sample size
    correlation: NDArray[np.float64]  # each pair's correlation of the two rates

    def bounds(self, *, simultaneous: bool = True) -> tuple[NDArray, NDArray]:
        """Newcombe's hybrid score bounds of every pair at the simultaneous (max-t) or the
        one-pair critical value."""
        q = self.simultaneous if simultaneous else self.pointwise
        i, j = (np.array(side, dtype=np.intp) for side in zip(*self.pairs, strict=True))
        return newcombe_difference(
            self.rates[i],
            self.effective[i],
            self.rates[j],
            self.effective[j],
            self.correlation,
            z=q,
        )

    def t_bounds(self, *, simultaneous: bool = True) -> tuple[NDArray, NDArray]:
        """``difference +- q se``: the t interval the score bounds match in between."""
        q = self.simultaneous if simultaneous else self.pointwise
        return self.difference - q * self.se, self.difference + q * self.se

    def estimates(self) -> list[Estimate]:
        """Each pair's difference as an ``Estimate`` with its simultaneous interval."""
        low, high = self.bounds()
        return [
            Estimate(
                value=float(self.difference[p]),
                low=float(low[p]),
                high=float(high[p]),
                method=PAIRED_DIFFERENCE,
                confidence=self.confidence,
                n=int(self.n[i] + self.n[j]),
                n_clusters=self.n_clusters,
                unit="difference",
            )
            for p, (i, j) in enumerate(self.pairs)
        ]


def paired_rate_differences(
    passed: ArrayLike,
    n: ArrayLike,
    stratum: ArrayLike,
    confidence: float = 0.95,
    *,
    seed: int = 0,
) -> PairedDifferences:
    """Rates and simultaneous paired differences of ``k`` models.

    ``passed[c, k]`` and ``n[c, k]``: model ``k``'s passes and conversations in cluster ``c``
    (a base scenario), which lies in stratum ``stratum[c]`` (its metric). Strata of one cluster
    add nothing to the variance; when none has two, the clusters are taken unstratified. A
    pair whose residuals never differ (both models passed exactly the same conversations) gets
    the variance of two independent binomial rates instead of none, so no difference reads as
    exact. Raises ``ValueError`` for fewer than two models or two clusters.
    """
    y = np.atleast_2d(np.asarray(passed, dtype=np.float64))
    m = np.atleast_2d(np.asarray(n, dtype=np.float64))
    s = np.asarray(stratum).ravel()
    clusters, k = y.shape
    if k < 2 or clusters < 2:
        raise ValueError("paired differences need two models and two clusters")
    totals = m.sum(axis=0)
    with np.errstate(all="ignore"):
        rates = y.sum(axis=0) / totals
        e = np.nan_to_num((y - rates * m) / totals)
    _, h = np.unique(s, return_inverse=True)
    h = h.ravel()
    sizes = np.bincount(h)
    df = float((sizes - 1).sum())
    if df < 1:
        h, sizes, df = np.zeros(clusters, np.intp), np.array([clusters]), float(clusters - 1)
    means = np.zeros((sizes.size, k))
    np.add.at(means, h, e)
    centred = e - (means / sizes[:, None])[h]
    scale = np.where(sizes > 1, sizes / np.maximum(sizes - 1, 1), 0.0)[h]
    covariance = (centred * scale[:, None]).T @ centred
    pairs = list(combinations(range(k), 2))
    contrast = np.zeros((len(pairs), k))
    for row, (i, j) in enumerate(pairs):
        contrast[row, i], contrast[row, j] = 1.0, -1.0
    pair_cov = contrast @ covariance @ contrast.T
    variance = np.diag(pair_cov).copy()
    with np.errstate(all="ignore"):
        shrunk = (y.sum(axis=0) + 0.5) / (totals + 1.0)
        independent = shrunk * (1 - shrunk) / totals
    flat = ~(variance > 1e-15)
    for p in np.flatnonzero(flat):
        i, j = pairs[p]
        variance[p] = independent[i] + independent[j]
        pair_cov[p, :] = pair_cov[:, p] = 0.0
        pair_cov[p, p] = variance[p]
    se = np.sqrt(variance)
    effective, correlation = _score_inputs(rates, totals, covariance, pairs, flat, clusters)
    pointwise = float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, df))
    simultaneous = _max_t_quantile(pair_cov / np.outer(se, se), df, confidence, seed)
    return PairedDifferences(
        rates=rates,
        n=totals,
        pairs=pairs,
        difference=contrast @ rates,
        se=se,
        df=df,
        pointwise=pointwise,
        simultaneous=max(simultaneous, pointwise),
        n_clusters=clusters,
        confidence=confidence,
        effective=effective,
        correlation=correlation,
    )


def _score_inputs(
    rates: NDArray, totals: NDArray, covariance: NDArray, pairs: list, flat: NDArray, g: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each rate's effective size (at most its n) and each pair's correlation (0 for a pair
    whose residuals never differ, which takes the independent variance above)."""
    variance = np.diag(covariance)
    with np.errstate(all="ignore"):
        binomial = rates * (1.0 - rates) / totals
        deff = np.maximum(variance / binomial, 1.0)
    known = (rates > 0) & (rates < 1) & (variance > 0) & np.isfinite(deff)
    fallback = float(np.median(deff[known])) if known.any() else None
    effective = np.where(known, totals / np.where(known, deff, 1.0), 0.0)
    for k in np.flatnonzero(~known):
        effective[k] = totals[k] / fallback if fallback is not None else min(g, totals[k])
    correlation = np.zeros(len(pairs))
    for p, (i, j) in enumerate(pairs):
        if not flat[p] and variance[i] > 0 and variance[j] > 0:
            correlation[p] = covariance[i, j] / np.sqrt(variance[i] * variance[j])
    return effective, np.clip(correlation, -1.0, 1.0)


def paired_difference_estimate(
    passed: ArrayLike,
    n: ArrayLike,
    *,
    items: int,
    over: str,
    confidence: float = 0.95,
    excluded: Iterable[Exclusion] = (),
) -> Estimate:
    """``rate_0 - rate_1`` of two sides measured on the same clusters (``passed[c, side]`` of
    ``n[c, side]``), as an ``Estimate`` over ``items`` paired items: the one pair's Newcombe
    bounds of :func:`paired_rate_differences`; a value without bounds from one cluster."""
    y = np.atleast_2d(np.asarray(passed, dtype=np.float64))
    m = np.atleast_2d(np.asarray(n, dtype=np.float64))
    g = int(y.shape[0])
    kept = tuple(e for e in excluded if e.count)
    method = f"{NEWCOMBE} over {over}"
    if items < MIN_ITEMS or g == 0:
        return Estimate.insufficient(
            n=items, n_clusters=g, unit="difference", method=method, excluded=kept
        )
    totals_y, totals_n = y.sum(axis=0), m.sum(axis=0)
    low = high = None
    if g >= 2:
        result = paired_rate_differences(y, m, np.zeros(g), confidence)
        bounds = result.bounds(simultaneous=False)
        low, high = float(bounds[0][0]), float(bounds[1][0])
    return Estimate(
        value=float(totals_y[0] / totals_n[0] - totals_y[1] / totals_n[1]),
        low=low,
        high=high,
        method=method,
        confidence=confidence,
        n=items,
        n_clusters=g,
        excluded=kept,
        unit="difference",
    )


def _max_t_quantile(correlation: NDArray, df: float, confidence: float, seed: int) -> float:
    """The ``confidence`` quantile of ``max_p |T_p|`` for T multivariate t with ``df`` degrees
    of freedom and this correlation (a seeded Monte Carlo draw)."""
    if correlation.shape[0] == 1:
        return float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, df))
    values, vectors = np.linalg.eigh(correlation)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((_MAX_T_DRAWS, correlation.shape[0])) @ root.T
    scale = np.sqrt(rng.chisquare(df, _MAX_T_DRAWS) / df)
    return float(np.quantile(np.abs(z).max(axis=1) / scale, confidence))
