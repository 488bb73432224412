"""Intervals that keep their coverage with three base scenarios per metric.

A metric has three base scenarios (each in a teen and an adult variant), so a per-metric figure
rests on three clusters. A percentile bootstrap over three clusters has only ten distinct
resamples and covers a nominal 95 % far less often (77-85 % in a simulation of the platform's
design). Two methods that hold their coverage at that design, checked by the simulation test in
``tests/results/test_coverage.py``:

* per-metric pass rates: the Wilson score interval on the *effective* sample size
  ``n / deff``, with the design effect ``deff = 1 + (m - 1) rho`` and the intra-cluster
  correlation ``rho`` estimated once for the whole run (one-way ANOVA over all metric x model
  groups: hundreds of groups make it stable where three clusters could not);
* per-metric differences of paired rates (teen minus adult): the mean of the per-base-scenario
  differences with a Student t interval on ``G - 1`` degrees of freedom -- exact for normal
  cluster differences, and the usual few-cluster correction (Cameron & Miller 2015, sec. VI);
* counts of "metrics whose difference excludes zero" control the false discovery rate with
  Benjamini-Hochberg over the t tests' p-values.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from results.estimates import Estimate

WILSON_EFFECTIVE = "Wilson score interval on the effective sample size (design effect)"
PAIRED_T = "paired t interval over base scenarios (G - 1 degrees of freedom)"


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


def wilson_interval(
    passed: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson (1927) score interval, vectorised; ``n`` may be fractional (effective sizes).

    Same formula as ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
    """
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    z = float(_scipy_stats.norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(all="ignore"):
        p = y / m
        d = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / d
        half = z / d * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def design_effect(rho: float, mean_cluster_size: float) -> float:
    return 1.0 + max(0.0, mean_cluster_size - 1.0) * rho


def effective_wilson(
    passed: ArrayLike, n: ArrayLike, deff: float, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson interval of ``passed / n`` treating the outcomes as ``n / deff`` independent ones."""
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    return wilson_interval(y / deff, m / deff, confidence)


def paired_t(
    differences: ArrayLike, confidence: float = 0.95
) -> tuple[float, float | None, float | None, float]:
    """Mean of per-cluster differences, its t interval on G - 1 df, and the two-sided p-value.

    With no spread between clusters (all differences equal) the interval collapses onto the
    mean and the p-value is 1 when the mean is 0 (no evidence of a difference), else 0.
    Fewer than two clusters: no interval and p-value ``nan``.
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return math.nan, None, None, math.nan
    mean = float(d.mean())
    if d.size < 2:
        return mean, None, None, math.nan
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    q = float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, d.size - 1))
    if se == 0.0:
        return mean, mean, mean, 1.0 if mean == 0.0 else 0.0
    p = float(2.0 * _scipy_stats.t.sf(abs(mean) / se, d.size - 1))
    return mean, mean - q * se, mean + q * se, p


def paired_difference_estimate(
    differences: ArrayLike, *, n: int, confidence: float = 0.95
) -> tuple[Estimate, float]:
    """:func:`paired_t` as an ``Estimate`` (unit "difference") and its p-value."""
    d = np.asarray(differences, dtype=np.float64)
    g = int(np.isfinite(d).sum())
    mean, low, high, p = paired_t(d, confidence)
    if g < 2:
        return Estimate.insufficient(
            n=n,
            n_clusters=g,
            unit="difference",
            method=PAIRED_T,
            reason="fewer than two base scenarios",
        ), p
    return Estimate(
        value=mean,
        low=low,
        high=high,
        method=PAIRED_T,
        confidence=confidence,
        n=n,
        n_clusters=g,
        unit="difference",
    ), p


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
