"""Intervals that keep their coverage with three base scenarios per metric.

A metric has three base scenarios (each in a teen and an adult variant), so a per-metric figure
rests on three clusters. A percentile bootstrap over three clusters has only ten distinct
resamples and covers a nominal 95 % far less often (77-85 % in a simulation of the platform's
design). Two methods that hold their coverage at that design, checked by the simulation test in
``tests/results/test_coverage.py``:

* per-metric pass rates: the Wilson score interval on the *effective* sample size
  ``n / deff``, with the design effect ``deff = 1 + (m - 1) rho`` and the intra-cluster
  correlation ``rho`` of the metric (one-way ANOVA pooled over its models,
  :func:`group_correlations`) shrunk towards the run's (pooled over all metric x model groups:
  hundreds of groups make it stable where three clusters could not) by
  :func:`shrunk_correlation`;
* per-metric differences of paired rates (teen minus adult, or one model's change between two
  runs) are tested in :mod:`.age_gap`; counts of "metrics whose difference excludes zero"
  control the false discovery rate with :func:`benjamini_hochberg` over its p-values.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

WILSON_EFFECTIVE = "Wilson score interval on the effective sample size (design effect)"


def intra_cluster_correlation(group: ArrayLike, passed: ArrayLike, n: ArrayLike) -> float:
    """ANOVA estimate of the intra-cluster correlation of binary outcomes, pooled over groups.

    Row ``c`` is one cluster (a base scenario of one metric and model) with ``passed[c]`` passes
    out of ``n[c]``, in group ``group[c]`` (the metric x model whose rate is estimated). Between
    clusters within groups and within clusters, ``rho = (MSB - MSW) / (MSB + (n0 - 1) MSW)``
    with ``n0`` the mean cluster size; clipped to [0, 1]; 0 when there is nothing to estimate.
    """
    g = np.unique(np.asarray(group), return_inverse=True)[1].ravel()
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if y.size == 0:
        return 0.0
    groups = int(g.max()) + 1
    g_y = np.bincount(g, weights=y, minlength=groups)
    g_n = np.bincount(g, weights=m, minlength=groups)
    g_c = np.bincount(g, minlength=groups)
    with np.errstate(all="ignore"):
        p_c = y / m
        p_g = (g_y / g_n)[g]
        ssb = float((m * (p_c - p_g) ** 2).sum())
        ssw = float((y - y * y / m).sum())
    dfb = float((g_c - 1).sum())
    dfw = float((m - 1).sum())
    if dfb <= 0 or dfw <= 0:
        return 0.0
    msb, msw = ssb / dfb, ssw / dfw
    n0 = float(m.mean())
    denominator = msb + (n0 - 1.0) * msw
    if denominator <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (msb - msw) / denominator)))


# How many clusters' worth of evidence the prior intra-cluster correlation counts as: an
# ANOVA estimate on G clusters gets weight (G - 1) / (G - 1 + PRIOR_CLUSTERS).
# The estimator's sampling variance falls as 1 / (G - 1) (Donner 1986), so this is the
# empirical-Bayes weight tau^2 / (tau^2 + var) with the prior's spread tau^2 worth four
# clusters' degrees of freedom: with three clusters the prior keeps 2/3 of the weight, with
# a hundred 4 %.
PRIOR_CLUSTERS = 4.0


def _sums(index: NDArray[np.int64], weights: ArrayLike, length: int) -> NDArray[np.float64]:
    """``np.bincount`` of float weights, typed as the floats it returns."""
    return np.bincount(index, weights=np.asarray(weights, np.float64), minlength=length).astype(
        np.float64
    )


def group_correlations(
    group: ArrayLike,
    sums: ArrayLike,
    n: ArrayLike,
    squares: ArrayLike | None = None,
    *,
    n_groups: int | None = None,
    pool: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """One-way ANOVA intra-cluster correlations, vectorised over groups or pools of groups.

    Row ``c`` is one cluster of group ``group[c]`` (0 .. n_groups - 1) whose ``n[c]`` values
    in [0, 1] sum to ``sums[c]`` and their squares to ``squares[c]`` (the sums themselves for
    0/1 values). Clusters are compared within their group; with ``pool[group]`` the sums of
    squares and degrees of freedom of a pool's groups are added (the models of one metric,
    which meet the same base scenarios). Returns per group (or pool) the estimate clipped to
    [0, 1] (0 where there is nothing to estimate), its between-cluster degrees of freedom
    ``sum (G - 1)``, and whether the values vary at all (data at 0 % or 100 % say nothing
    about their correlation: the caller uses its prior there).
    """
    g = np.asarray(group, dtype=np.int64).ravel()
    y = np.asarray(sums, dtype=np.float64).ravel()
    m = np.asarray(n, dtype=np.float64).ravel()
    q = y if squares is None else np.asarray(squares, dtype=np.float64).ravel()
    k = int(n_groups if n_groups is not None else (g.max() + 1 if g.size else 0))
    g_y = _sums(g, y, k)
    g_n = _sums(g, m, k)
    g_c = _sums(g, (m > 0).astype(float), k)
    with np.errstate(all="ignore"):
        p_c = np.where(m > 0, y / m, 0.0)
        p_g = (g_y / g_n)[g] if g.size else np.zeros(0)
        ssb = _sums(g, m * (p_c - p_g) ** 2, k)
        ssw = _sums(g, np.where(m > 0, q - y * y / np.where(m > 0, m, 1.0), 0.0), k)
        total = _sums(g, q, k) - g_y * g_y / g_n
    dfb, dfw = np.maximum(g_c - 1.0, 0.0), np.maximum(g_n - g_c, 0.0)
    if pool is not None:
        owner = np.asarray(pool, dtype=np.int64).ravel()
        pools = int(owner.max()) + 1 if owner.size else 0
        ssb, ssw, dfb, dfw, g_n, g_c = (
            _sums(owner, v, pools) for v in (ssb, ssw, dfb, dfw, g_n, g_c)
        )
        total = _sums(owner, np.nan_to_num(total), pools)
    with np.errstate(all="ignore"):
        msb, msw = ssb / dfb, ssw / dfw
        n0 = g_n / g_c
        rho = (msb - msw) / (msb + (n0 - 1.0) * msw)
    usable = (dfb > 0) & (dfw > 0) & np.isfinite(rho)
    rho = np.where(usable, np.clip(rho, 0.0, 1.0), 0.0)
    varied = np.isfinite(total) & (total > 1e-12)
    return rho, dfb, varied


def shrunk_correlation(
    rho: ArrayLike,
    degrees: ArrayLike,
    varied: ArrayLike,
    prior: ArrayLike,
    *,
    prior_clusters: float = PRIOR_CLUSTERS,
) -> NDArray[np.float64]:
    """An intra-cluster correlation estimated on ``degrees`` between-cluster degrees of
    freedom (``G - 1`` for G clusters) shrunk towards ``prior`` with the weight
    ``degrees / (degrees + prior_clusters)`` of its own; the prior alone where the values do
    not vary. ``prior_clusters`` says how many clusters' worth of evidence the prior is: few
    for a default that only guards coverage, many for a release's own pooled estimate."""
    d = np.where(np.asarray(varied), np.maximum(np.asarray(degrees, dtype=np.float64), 0.0), 0.0)
    weight = d / (d + prior_clusters)
    return weight * np.asarray(rho, dtype=np.float64) + (1.0 - weight) * np.asarray(prior)


@lru_cache(maxsize=16)
def _normal_quantile(confidence: float) -> float:
    # scipy's quantile costs more than the rest of a Wilson interval; figures ask for a few
    # confidence levels thousands of times in a refresh.
    return float(_scipy_stats.norm.ppf(0.5 + confidence / 2.0))


def wilson_interval(
    passed: ArrayLike, n: ArrayLike, confidence: float = 0.95, *, z: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson (1927) score interval, vectorised; ``n`` may be fractional (effective sizes).

    Same formula as ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
    ``z`` replaces the normal quantile of ``confidence`` (a t or simultaneous critical value).
    """
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if z is None:
        z = _normal_quantile(confidence)
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(all="ignore"):
        p = y / m
        d = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / d
        half = z / d * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m))
        # The score interval always holds p; rounding alone put a bound an ulp past it (an
        # all-pass rate's upper bound at 0.9999999999999999).
        low = np.minimum(centre - half, p)
        high = np.maximum(centre + half, p)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def design_effect(rho: float, mean_cluster_size: float) -> float:
    return 1.0 + max(0.0, mean_cluster_size - 1.0) * rho


def effective_wilson(
    passed: ArrayLike, n: ArrayLike, deff: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson interval of ``passed / n`` treating the outcomes as ``n / deff`` independent ones
    (``deff`` a number or one per rate)."""
    deff = np.asarray(deff, dtype=np.float64)
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    return wilson_interval(y / deff, m / deff, confidence)


def benjamini_hochberg(p_values: ArrayLike, q: float = 0.05) -> tuple[NDArray[np.bool_], NDArray]:
    """Benjamini-Hochberg (1995) step-up: which hypotheses to reject at FDR ``q``, and the
    adjusted p-values -- as ``statsmodels.stats.multitest.multipletests(method="fdr_bh")``.

    ``nan`` p-values (untestable) are never rejected and do not count among the tests.
    """
    p = np.asarray(p_values, dtype=np.float64)
    reject = np.zeros(p.shape, dtype=bool)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(np.isfinite(p))
    m = valid.size
    if m == 0:
        return reject, adjusted
    order = valid[np.argsort(p[valid], kind="stable")]
    ranked = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    adjusted[order] = adjusted_sorted
    reject[order] = adjusted_sorted <= q
    return reject, adjusted


STRATIFIED_WILSON = (
    "Wilson score interval on the effective sample size (design effect per metric from the "
    "run's intra-cluster correlation)"
)


def stratified_wilson(
    group: ArrayLike,
    stratum: ArrayLike,
    passed: ArrayLike,
    n: ArrayLike,
    rho: float,
    confidence: float = 0.95,
    *,
    n_groups: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Intervals of pooled pass rates over the base scenarios of several metrics (a subarea,
    area, label category or overall rate of one model), vectorised over groups; they keep
    their coverage with three clusters as with thousands, and at 0 % and 100 %.

    Row ``c`` is one cluster (a base scenario of one metric) with ``passed[c]`` of ``n[c]``,
    in group ``group[c]`` (0 .. n_groups - 1) and stratum ``stratum[c]`` (its metric: the
    metrics of a group are fixed, their base scenarios a sample). A percentile bootstrap over
    a handful of clusters under-covers and collapses to a point when every cluster sits at 0
    or 1; here each metric ``h`` of a group contributes the variance of its own rate with the
    per-metric design effect (:func:`effective_wilson`),
    ``N_h p_h (1 - p_h) (1 + (sum m_c^2 / N_h - 1) rho)``, with ``rho`` the intra-cluster
    correlation estimated once for the whole run (:func:`intra_cluster_correlation`) and
    ``p_h`` shrunk towards the group's rate by one outcome (a metric at 0 % still has
    variance). The rate ``p`` of the group then gets the Wilson interval at the effective size
    ``p (1 - p) / variance`` (at most N); at ``p`` = 0 or 1 the effective size is N over the
    mean design effect. Fewer than two items: ``nan`` bounds (the minimum n is 2).
    """
    g = np.asarray(group, dtype=np.int64).ravel()
    s = np.asarray(stratum, dtype=np.int64).ravel()
    y = np.asarray(passed, dtype=np.float64).ravel()
    m = np.asarray(n, dtype=np.float64).ravel()
    k = int(n_groups if n_groups is not None else (g.max() + 1 if g.size else 0))
    if g.size == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    _, h = np.unique(np.column_stack([g, s]), axis=0, return_inverse=True)
    h = h.ravel()
    h_group = np.zeros(int(h.max()) + 1, np.int64)
    h_group[h] = g
    y_h, n_h = np.bincount(h, weights=y), np.bincount(h, weights=m)
    y_g = np.bincount(g, weights=y, minlength=k)
    n_g = np.bincount(g, weights=m, minlength=k)
    with np.errstate(all="ignore"):
        p = y_g / n_g
        deff_h = 1.0 + (np.bincount(h, weights=m * m) / n_h - 1.0) * max(0.0, rho)
        shrunk = (y_h + p[h_group]) / (n_h + 1.0)
        variance = np.bincount(
            h_group, weights=n_h * shrunk * (1.0 - shrunk) * deff_h, minlength=k
        ) / (n_g * n_g)
        mean_deff = np.bincount(h_group, weights=n_h * deff_h, minlength=k) / n_g
        inside = (p > 0.0) & (p < 1.0) & (variance > 0.0)
        size = np.where(inside, p * (1.0 - p) / variance, n_g / mean_deff)
        size = np.minimum(size, n_g)
    low, high = wilson_interval(p * size, size, confidence)
    few = ~(n_g >= 2)
    return np.where(few, np.nan, low), np.where(few, np.nan, high)
