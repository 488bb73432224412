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
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from .estimates import Estimate

PAIRED_DIFFERENCE = (
    "paired difference over shared base scenarios (stratified by metric), "
    "simultaneous over all pairs (max-t)"
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

    def bounds(self, *, simultaneous: bool = True) -> tuple[NDArray, NDArray]:
        q = self.simultaneous if simultaneous else self.pointwise
        return self.difference - q * self.se, self.difference + q * self.se

    def estimates(self) -> list[Estimate]:
        """Each pair's difference as an ``Estimate`` with its simultaneous interval, cut to
        [-1, 1]: with few clusters the t interval can reach past what two rates can differ by,
        and a bound no data could produce would only mislead (the cut costs no coverage)."""
        low, high = self.bounds()
        low, high = np.maximum(low, -1.0), np.minimum(high, 1.0)
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
