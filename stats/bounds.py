"""Intervals that never collapse to a point nor leave the range their figure can take.

A percentile bootstrap over clusters gives "1.0 [1.0, 1.0]" whenever every resample agrees --
60 of 60 agreements, 0 of 5,760 readings unverified -- and with one to three clusters it has
almost nothing to draw. The constructors of :mod:`.figures`, :mod:`.differences` and
:mod:`.swap` build their intervals here instead:

* a proportion: the Wilson score interval on the effective sample size ``N / deff``,
  ``deff = 1 + (sum n_c^2 / N - 1) rho``, with ``rho`` the data's own one-way ANOVA
  intra-cluster correlation shrunk towards a prior (:func:`.few_clusters.shrunk_correlation`;
  the prior alone when the data do not vary), and Brown, Cai & DasGupta's Poisson bound next
  to a handful of effective passes or fails. Unclustered data have ``deff = 1``: plain Wilson.
  The default prior, ``rho = 1``, counts each cluster once when nothing is known -- the only
  value that keeps coverage whatever the true correlation; callers that know the run's
  correlation pass it.
* a chance-corrected coefficient ``1 - D_o / D_e`` (Cohen's and Fleiss' kappa, Krippendorff's
  alpha): the hull of the cluster bootstrap's percentile interval and the coefficient's image
  of the effective-size Wilson interval of the observed disagreement ``D_o`` at the observed
  chance disagreement ``D_e``, cut to [-1, 1]. The bootstrap carries the variation of
  ``D_e``; the score interval keeps the hull open when every resample agrees and with one
  cluster, where no bootstrap can be drawn.
* a difference of two rates: Newcombe's hybrid score interval (MOVER, Zou & Donner 2008) from
  the two rates' effective-size Wilson intervals and their correlation, which lies in
  [-1, 1] by construction: ``sqrt(a^2 + b^2 - 2 r a b) <= a + b`` for ``|r| <= 1``.
* a rank correlation: the hull of the bootstrap's percentile interval and the image of the
  Wilson interval of the concordance share ``(r + 1) / 2`` on the ranked items, the items
  counted at half (Kendall) or a third (Spearman) -- the bound ``c (1 - r^2) / n`` on the
  variance of these rank statistics (Daniels & Kendall 1947).

``benchmarks/coverage.py`` (section "extremes") simulates each one's coverage at true values
0, 1 and between, with one to twenty clusters.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaincinv

from .few_clusters import group_correlations, shrunk_correlation, wilson_interval

WILSON = "Wilson score interval"
CLUSTER_WILSON = (
    "Wilson score interval on the effective sample size (design effect from the clusters' "
    "intra-cluster correlation, shrunk towards a prior)"
)
COEFFICIENT_HULL = (
    "hull of the percentile bootstrap and the Wilson interval of the observed agreement on "
    "the effective sample size, at the observed chance agreement"
)
RANK_HULL = (
    "hull of the percentile bootstrap and the Wilson interval of the concordance share on "
    "the ranked items"
)
NEWCOMBE = "difference of paired rates, Newcombe's hybrid score interval on effective sizes"

# Nothing known about the correlation: count each cluster once (see the module docstring).
DEFAULT_PRIOR_ICC = 1.0
# Values strictly inside [0, 1] gain effective size by their variance's ratio to a 0/1
# variable's only from this many values on, and by at most this much: a handful of values
# that happen to agree would otherwise claim any precision.
_VARIANCE_ITEMS = 20
_LARGEST_RATIO = 4.0


def cluster_correlation(
    sums: ArrayLike,
    sizes: ArrayLike,
    squares: ArrayLike | None = None,
    *,
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> float:
    """The clusters' own intra-cluster correlation shrunk towards ``prior_icc``
    (:func:`.few_clusters.shrunk_correlation`); the prior alone when the values do not vary."""
    m = np.asarray(sizes, dtype=np.float64).ravel()
    rho, clusters, varied = group_correlations(
        np.zeros(m.size, np.int64), sums, m, squares, n_groups=1
    )
    return float(shrunk_correlation(rho, clusters, varied, prior_icc)[0])


def effective_size(
    sums: ArrayLike,
    sizes: ArrayLike,
    squares: ArrayLike | None = None,
    *,
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> float:
    """``N / deff`` of values in [0, 1] whose cluster ``c`` holds ``sizes[c]`` of them summing
    to ``sums[c]`` (their squares to ``squares[c]``; the sums for 0/1 values).

    Values strictly between 0 and 1 vary less than 0/1 values of the same mean ``D`` (whose
    variance ``D (1 - D)`` is the most a [0, 1] variable can have); from twenty values on, the
    size is scaled up by that ratio (at most four times), so a Wilson interval at it has about
    the width their own variance gives."""
    m = np.asarray(sizes, dtype=np.float64).ravel()
    total = float(m.sum())
    if total <= 0:
        return 0.0
    binary = squares is None or np.array_equal(squares, sums)
    shrunk = cluster_correlation(sums, m, None if binary else squares, prior_icc=prior_icc)
    deff = 1.0 + max(0.0, float((m * m).sum()) / total - 1.0) * shrunk
    size = total / deff
    if squares is not None and not np.array_equal(squares, sums) and total >= _VARIANCE_ITEMS:
        mean = float(np.sum(sums)) / total
        variance = (float(np.sum(squares)) / total - mean * mean) * total / (total - 1.0)
        if 0.0 < mean < 1.0 and variance > 1e-9 * mean * (1.0 - mean):
            size *= min(_LARGEST_RATIO, max(1.0, mean * (1.0 - mean) / variance))
    return size


def proportion_bounds(
    sums: ArrayLike,
    sizes: ArrayLike,
    *,
    prior_icc: float = DEFAULT_PRIOR_ICC,
    confidence: float = 0.95,
) -> tuple[float, float, float, float]:
    """(rate, low, high, effective size) of 0/1 outcomes from their per-cluster sums."""
    y = np.asarray(sums, dtype=np.float64).ravel()
    m = np.asarray(sizes, dtype=np.float64).ravel()
    rate = float(y.sum() / m.sum())
    size = effective_size(y, m, prior_icc=prior_icc)
    low, high = (float(b) for b in wilson_interval(rate * size, size, confidence))
    if size < float(m.sum()):
        low, high = _small_count_bounds(rate, size, low, high, confidence)
    return rate, low, high, size


def _small_count_bounds(
    rate: float, size: float, low: float, high: float, confidence: float
) -> tuple[float, float]:
    """Wilson's bound next to a handful of effective passes (or fails) lies too close to 0
    (or 1): its coverage dips to 88 % at three clusters and a 2 % rate. Brown, Cai & DasGupta
    (2001) replace it there by the Poisson bound ``chi2_{2x}(alpha / 2) / (2 n)``, for
    ``x`` up to 2 effective counts (3 above 50 effective outcomes); it is only ever lower. The
    design effect makes these counts fractional, the chi-square quantile takes them so."""
    tail = (1.0 - confidence) / 2.0
    most = 2.0 if size <= 50 else 3.0
    passes, fails = rate * size, (1.0 - rate) * size
    # chi2_{2x}(q) / 2 is the q quantile of a Gamma(x): scipy.special's inverse is direct.
    if 0.0 < passes <= most:
        low = min(low, float(gammaincinv(passes, tail)) / size)
    if 0.0 < fails <= most:
        high = max(high, 1.0 - float(gammaincinv(fails, tail)) / size)
    return low, high


def proportion_sd(rate: float, size: float) -> float | None:
    """The binomial standard error on the effective size; None at 0 % and 100 %, where a zero
    would claim an exactness the data do not have."""
    if not 0.0 < rate < 1.0 or size <= 0:
        return None
    return float(np.sqrt(rate * (1.0 - rate) / size))


def coefficient_image(
    low_agreement: ArrayLike, high_agreement: ArrayLike, chance_agreement: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """An interval of observed agreement ``p_o`` carried to ``(p_o - p_e) / (1 - p_e)`` at the
    observed chance agreement ``p_e`` (< 1 wherever the coefficient is defined), cut to
    [-1, 1]; vectorised. The coefficient is increasing in ``p_o``, so the image of a score
    interval of positive width has positive width."""
    pe = np.asarray(chance_agreement, dtype=np.float64)
    with np.errstate(all="ignore"):
        low = (np.asarray(low_agreement, dtype=np.float64) - pe) / (1.0 - pe)
        high = (np.asarray(high_agreement, dtype=np.float64) - pe) / (1.0 - pe)
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def coefficient_bounds(
    value: float,
    chance_disagreement: float,
    size: float,
    *,
    bootstrap: tuple[float, float] | None = None,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Bounds of ``value = 1 - D_o / D_e`` (``D_e`` = ``chance_disagreement``, both scaled to
    [0, 1]): the image of the Wilson interval of the agreement ``1 - D_o`` on ``size`` items
    (:func:`coefficient_image`), hulled with the ``bootstrap`` percentile interval when there
    is one, cut to [-1, 1] and holding ``value``."""
    d_e = float(chance_disagreement)
    agreement = 1.0 - min(1.0, max(0.0, (1.0 - value) * d_e))
    low_a, high_a = wilson_interval(agreement * size, size, confidence)
    low, high = (float(b) for b in coefficient_image(low_a, high_a, 1.0 - d_e))
    return _hulled(value, low, high, bootstrap)


def _hulled(
    value: float, low: float, high: float, bootstrap: tuple[float, float] | None
) -> tuple[float, float]:
    """A score interval hulled with the bootstrap's percentile interval when there is one, cut
    to [-1, 1] and holding ``value``: the one ending of every coefficient's bounds."""
    if bootstrap is not None and all(np.isfinite(bootstrap)):
        low, high = min(low, bootstrap[0]), max(high, bootstrap[1])
    return max(-1.0, min(low, value)), min(1.0, max(high, value))


def rank_correlation_bounds(
    value: float,
    items: int,
    *,
    kind: str,
    bootstrap: tuple[float, float] | None = None,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Bounds of a Kendall (``kind="kendall"``) or Spearman rank correlation over ``items``
    ranked items, hulled with the ``bootstrap`` percentile interval when there is one."""
    size = items / (2.0 if kind == "kendall" else 3.0)
    share = (value + 1.0) / 2.0
    low_s, high_s = (float(b) for b in wilson_interval(share * size, size, confidence))
    low, high = 2.0 * low_s - 1.0, 2.0 * high_s - 1.0
    return _hulled(value, low, high, bootstrap)


def newcombe_difference(
    rate_a: ArrayLike,
    size_a: ArrayLike,
    rate_b: ArrayLike,
    size_b: ArrayLike,
    correlation: ArrayLike,
    *,
    z: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bounds of ``rate_a - rate_b`` (vectorised): each rate's Wilson interval at its
    effective size and critical value ``z``, combined with the pair's correlation (MOVER)."""
    pa, pb = np.asarray(rate_a, float), np.asarray(rate_b, float)
    low_a, high_a = wilson_interval(pa * size_a, size_a, z=z)
    low_b, high_b = wilson_interval(pb * size_b, size_b, z=z)
    return mover_difference(pa, low_a, high_a, pb, low_b, high_b, correlation)


def mover_difference(
    rate_a: ArrayLike,
    low_a: ArrayLike,
    high_a: ArrayLike,
    rate_b: ArrayLike,
    low_b: ArrayLike,
    high_b: ArrayLike,
    correlation: ArrayLike = 0.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bounds of ``rate_a - rate_b`` from each rate's own interval (Newcombe 1998, method 10;
    MOVER, Zou & Donner 2008), with the two rates' correlation (0 for independent samples).
    Inside [-1, 1] by construction for intervals inside [0, 1]; holds the difference."""
    pa, pb = np.asarray(rate_a, float), np.asarray(rate_b, float)
    r = np.clip(np.nan_to_num(np.asarray(correlation, float)), -1.0, 1.0)
    a, b = pa - np.asarray(low_a, float), np.asarray(high_b, float) - pb
    c, d = np.asarray(high_a, float) - pa, pb - np.asarray(low_b, float)
    difference = pa - pb
    low = difference - np.sqrt(np.maximum(a * a + b * b - 2.0 * r * a * b, 0.0))
    high = difference + np.sqrt(np.maximum(c * c + d * d - 2.0 * r * c * d, 0.0))
    return np.clip(np.minimum(low, difference), -1.0, 1.0), np.clip(
        np.maximum(high, difference), -1.0, 1.0
    )
