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
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as _scipy_stats

from .few_clusters import wilson_interval

WILSON_ITEMS = "Wilson score interval on the number of items (every item scored 0 or 1)"
T_ITEMS = (
    "t interval over items (G - 1 degrees of freedom) clamped to [0, 1], widened to the Wilson "
    "interval where the items do not vary or the score sits at 0 or 1"
)
PAIRED_T_ITEMS = "paired t interval over items (G - 1 degrees of freedom)"


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


def paired_mean_difference_interval(
    differences: Sequence[float] | ArrayLike, confidence: float = 0.95, *, floor: float = 0.0
) -> tuple[float, float, float, int] | None:
    """(mean, low, high, df) of paired differences by Student's t on G - 1 degrees of freedom,
    with the variance of one difference at least ``floor`` (its sampling variance), so equal
    differences do not read as an exact one. None below two differences."""
    d = np.asarray(differences, dtype=np.float64).ravel()
    g = d.size
    if g < 2:
        return None
    mean = float(d.mean())
    variance = max(float(d.var(ddof=1)), float(floor))
    half = float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, g - 1)) * math.sqrt(variance / g)
    return mean, mean - half, mean + half, g - 1
