"""Intervals of a mean clipped to [0, 1] that neither collapse nor under-cover with few items:
HealthBench's rubric aggregate (the mean of unclipped item scores, clipped), and differences of
two such means.

HealthBench's percentile bootstrap over items collapses to a point whenever every item scores
the same -- three replies that each meet every criterion print "1.000 [1.000, 1.000] n = 3",
as if three items proved a perfect score -- and with a handful of items it has too few distinct
resamples to cover. Here, with G items (each its own cluster: one conversation per item):

* every item score 0 or 1 (a proportion): the Wilson score interval on G;
* otherwise: Student's t on the item scores with G - 1 degrees of freedom, clamped to [0, 1]
  (clamping is monotone, so an interval that holds the unclipped mean holds the clipped one);
  where that cannot speak -- no spread among the items, or the clipped mean at 0 or 1 -- the
  hull with the Wilson interval of the clipped mean on G (a variable in [0, 1] with mean p has
  variance at most p (1 - p), so Wilson's score variance bounds it).

Both keep their coverage from two items up, at 0 % and 100 % included
(``tests/stats/test_bounded_means.py`` simulates it with its Monte Carlo error). Pure NumPy and
SciPy.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as _scipy_stats

from .few_clusters import wilson_interval

WILSON_ITEMS = "Wilson score interval on the number of items (every item scored 0 or 1)"
T_ITEMS = (
    "t interval over items (G - 1 degrees of freedom) clamped to [0, 1], widened to the Wilson "
    "interval where the items do not vary or the score sits at 0 or 1"
)
WELCH_ITEMS = (
    "Welch t interval of the difference of two clipped means over items, each side's variance "
    "at least the Wilson-type bound of its score"
)


def clipped_mean_interval(
    scores: ArrayLike, confidence: float = 0.95
) -> tuple[float, float] | None:
    """(low, high) for ``clip(mean(scores), 0, 1)``: the hull of the clamped t interval and the
    Wilson interval of the clipped mean on the number of scores; None below two scores.

    The bounds always hold the clipped mean, and are apart for two or more scores.
    """
    x = np.asarray(scores, dtype=np.float64).ravel()
    g = x.size
    if g < 2:
        return None
    mean = float(x.mean())
    value = min(1.0, max(0.0, mean))
    wilson_low, wilson_high = (float(b) for b in wilson_interval(value * g, g, confidence))
    half = (
        float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, g - 1))
        * float(x.std(ddof=1))
        / math.sqrt(g)
    )
    low = min(wilson_low, max(0.0, mean - half), value)
    high = max(wilson_high, min(1.0, mean + half), value)
    return low, high


def bounded_rate_interval(
    theta: float,
    se: float,
    q: float,
    *,
    fallback_n: float,
    most_n: float,
    confidence: float = 0.95,
) -> tuple[float, float, float, float]:
    """A rate and its interval inside [0, 1] from an unbounded estimate ``theta`` of it with
    standard error ``se`` and interval ``theta +- q se`` (a prediction-powered rate, whose
    correction can overshoot): (value, low, high, effective n).

    The same hull as :func:`clipped_mean_interval`: the value is ``theta`` projected onto
    [0, 1]; the interval is the Wilson interval at the effective sample size the standard
    error implies, ``n_eff = p (1 - p) / se^2`` (the binomial sample that would be as precise),
    widened to hold whatever of ``theta +- q se`` lies in [0, 1] -- so it covers at least as
    often as the unbounded interval. Where ``p (1 - p) / se^2`` says nothing (the value on a
    bound, or ``se = 0``) ``n_eff`` is ``fallback_n`` (the labelled sample's own size); it
    never exceeds ``most_n`` (no sample is more precise than the whole population it is drawn
    from). Wilson's interval holds its point and has positive width for any finite ``n_eff``.
    """
    p = min(1.0, max(0.0, theta))
    inside = 0.0 < p < 1.0 and se > 0.0
    n_eff = p * (1.0 - p) / (se * se) if inside else fallback_n
    n_eff = max(1.0, min(n_eff, float(most_n)))
    low, high = (float(b) for b in wilson_interval(p * n_eff, n_eff, confidence))
    if theta - q * se < 1.0 and theta + q * se > 0.0:
        low = min(low, max(0.0, theta - q * se))
        high = max(high, min(1.0, theta + q * se))
    return p, min(low, p), max(high, p), n_eff


def clipped_mean_difference_interval(
    first: ArrayLike, second: ArrayLike, confidence: float = 0.95
) -> tuple[float, float, float, float] | None:
    """``clip(mean(first)) - clip(mean(second))`` of two independent samples of item scores
    (teen items against adult items: different situations, so nothing pairs them), with
    Welch's t interval on the Welch-Satterthwaite degrees of freedom, clamped to [-1, 1].

    Each side's variance is at least the Wilson-type bound ``c (1 - c)`` of its clipped mean
    shrunk by one item towards 1/2 (a score in [0, 1] with mean c varies at most that much), so
    items that all score alike do not read as an exact difference. Returns (value, low, high,
    df); None when a side has fewer than two items.
    """
    a = np.asarray(first, dtype=np.float64).ravel()
    b = np.asarray(second, dtype=np.float64).ravel()
    if a.size < 2 or b.size < 2:
        return None
    parts = []
    for x in (a, b):
        clipped = min(1.0, max(0.0, float(x.mean())))
        shrunk = (clipped * x.size + 0.5) / (x.size + 1.0)
        variance = max(float(x.var(ddof=1)), shrunk * (1.0 - shrunk))
        parts.append((clipped, variance / x.size, x.size - 1))
    value = parts[0][0] - parts[1][0]
    se2 = parts[0][1] + parts[1][1]
    df = se2 * se2 / sum(v * v / d for _, v, d in parts)
    half = float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, df)) * math.sqrt(se2)
    return value, max(-1.0, value - half), min(1.0, value + half), df
