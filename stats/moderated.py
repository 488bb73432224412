"""Per-group variances shrunk towards a common prior: the moderated t of Smyth (2004, limma).

A metric's teen-minus-adult difference rests on three base scenarios, so its own variance has
two degrees of freedom: a t test on it is valid but has almost no power, and three equal
differences read as an exact one. One variance pooled across all metrics (the previous
method) is powerful but anti-conservative for exactly the metrics whose difference varies a lot
between base scenarios. The moderated t sits between: each metric's sample variance ``s_g^2``
(``d`` degrees of freedom) is shrunk towards a prior ``s_0^2`` with ``d_0`` degrees of freedom
estimated from all metrics, ``s~_g^2 = (d_0 s_0^2 + d s_g^2) / (d_0 + d)``, and the statistic
has a t distribution on ``d_0 + d`` degrees of freedom under the null. ``d_0`` and ``s_0^2``
come from the moments of ``log s_g^2`` (limma's ``fitFDist``); metrics that spread more than
the others keep more of their own variance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special


def _trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Newton's method as limma's ``trigammaInverse``)."""
    if x > 1e7:
        return 1.0 / np.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1.0 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def prior_variance(variances: ArrayLike, df: ArrayLike) -> tuple[float, float]:
    """(s_0^2, d_0): the scaled-F prior of sample variances with ``df`` degrees of freedom
    (limma's ``fitFDist`` without covariates). Non-positive or non-finite variances and those
    with no degrees of freedom are left out; ``d_0`` is ``inf`` when the variances spread no
    more than sampling alone explains (then every group gets ``s_0^2``)."""
    s2 = np.asarray(variances, dtype=np.float64)
    d = np.asarray(df, dtype=np.float64) * np.ones_like(s2)
    ok = np.isfinite(s2) & (s2 > 0) & (d > 0)
    s2, d = s2[ok], d[ok]
    if s2.size < 2:
        return (float(s2[0]) if s2.size else 0.0), np.inf
    e = np.log(s2) - special.digamma(d / 2) + np.log(d / 2)
    mean = float(e.mean())
    spread = float(((e - mean) ** 2).sum() / (e.size - 1) - special.polygamma(1, d / 2).mean())
    if spread <= 0:
        return float(np.exp(mean)), np.inf
    d0 = 2.0 * _trigamma_inverse(spread)
    s0 = float(np.exp(mean + special.digamma(d0 / 2) - np.log(d0 / 2)))
    return s0, d0


def moderated_variances(
    variances: ArrayLike, df: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each group's variance shrunk towards the prior, and its degrees of freedom
    ``d_0 + d`` (``inf`` where ``d_0`` is)."""
    s2 = np.asarray(variances, dtype=np.float64)
    d = np.asarray(df, dtype=np.float64) * np.ones_like(s2)
    s0, d0 = prior_variance(s2, d)
    if not np.isfinite(d0):
        return np.full(s2.shape, s0), np.full(s2.shape, np.inf)
    own = np.where(np.isfinite(s2), s2, s0)
    return (d0 * s0 + d * own) / (d0 + d), d0 + d
