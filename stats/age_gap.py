"""Teen-minus-adult pass-rate differences per metric: a paired, moderated test over base
scenarios with per-model binomial variances, and its power.

Layout: ``passed[g, b, a, t]`` and ``n[g, b, a, t]`` -- metric ``g``, base scenario ``b``, age
``a`` (0 teen, 1 adult), model ``t``; ``n = 0`` where a cell has no judged conversation.

The estimand of a metric is its teen-minus-adult difference averaged over the run's models and
over the population of base scenarios (the three a metric has are a sample of the situations
it could have used). Per base, ``d_b`` is the mean over the models judged in both variants of
``teen rate - adult rate``: the pair is one model on the teen and the adult variant of the
same base, so model and base effects cancel. The estimate is the mean of the ``d_b``.

One ``d_b`` varies for two reasons, and its variance holds both:

* binomial noise of every cell, ``pi (1 - pi) / n`` at the model's own rate (one binomial
  variance at the rate pooled over models whose rates differ widely overstated it, and the
  test rejected a true null 1 % of the time instead of 5 %). The rate is the model's over
  both variants -- the rate under the null, as in a score test: at each variant's own rate a
  metric whose outcomes saturate (teens failing, adults passing) looked almost noiseless and
  was "significant" under the null far beyond its level. It is shrunk by one outcome towards
  the metric's rate, itself shrunk by half an outcome towards 1/2, so a cell of one
  conversation or a metric at 0 % is never variance 0;
* the between-base variation of the true difference, which a metric's three bases estimate
  badly (two degrees of freedom): its distribution over metrics is estimated from all of
  them (:func:`between_base_mixture`, on the logit scale carried to rates by the slope
  ``pi (1 - pi)``), and each metric's own sample variance says where in it the metric sits.

The p-value averages the normal tail over that posterior; the interval is the set of
differences in [-1, 1] the test does not reject: ``mean +- h``, ``h`` the posterior's
critical half-width, intersected with the possible differences. It therefore lies in
[-1, 1] by construction, holds the estimate, has positive width (every variance is
positive), and excludes 0 exactly when the p-value is below ``1 - confidence``. The
variance is the null's; where the true gap is 10-15 points the 95 % interval held it 94.5 %
of the time in the simulated full release and 92.5 % in the demo's three-model design
(``benchmarks/teen_adult.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy import stats as _scipy_stats

from .estimates import Estimate

AGE_GAP_METHOD = (
    "paired difference over base scenarios (the teen and adult variant of a base, per model); "
    "per-model binomial variance plus a between-base variance whose distribution is estimated "
    "from all metrics (empirical Bayes); interval within [-1, 1]"
)
PLAIN_PAIRED_METHOD = "paired t over base scenarios (B - 1 degrees of freedom)"


@dataclass(frozen=True)
class AgeGapTest:
    """Per metric: the estimate, its variance model, bounds and p-value (``nan`` where the
    metric has no base with a teen-adult pair, or no variance to test with)."""

    difference: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    p_value: NDArray[np.float64]
    variance: NDArray[np.float64]  # moderated variance of one base difference
    df: NDArray[np.float64]
    n_bases: NDArray[np.int64]
    n: NDArray[np.int64]  # conversations in the pairs
    confidence: float
    method: str
    # The moderated test's variance model (``None`` for the plain t): per metric and grid
    # point, the standard error of the mean and its posterior probability.
    se: NDArray[np.float64] | None = None
    posterior: NDArray[np.float64] | None = None
    half_width: NDArray[np.float64] | None = None

    def power(self, gap: float) -> NDArray[np.float64]:
        """Per metric, the chance that the test rejects when the true difference is ``gap``,
        at the metric's own design and fitted variance (``nan`` where untestable)."""
        if self.se is None or self.posterior is None or self.half_width is None:
            raise ValueError("power is computed for the moderated test only")
        h = self.half_width[:, None]
        with np.errstate(all="ignore"):
            hit = _scipy_stats.norm.sf((h - gap) / self.se) + _scipy_stats.norm.cdf(
                (-h - gap) / self.se
            )
        found = (self.posterior * hit).sum(axis=1)
        return np.where(np.isfinite(self.p_value), found, np.nan)

    def mean_power(self, gap: float) -> float | None:
        """The power averaged over the testable metrics."""
        found = self.power(gap)
        return float(np.nanmean(found)) if np.isfinite(found).any() else None

    def minimum_detectable_gap(self, target: float = 0.8) -> float | None:
        """Smallest true difference found with mean power ``target``; ``None`` when not
        even a difference of 1 (every teen passes, every adult fails) reaches it."""
        if not np.isfinite(self.p_value).any() or (self.mean_power(1.0) or 0.0) < target:
            return None
        return float(
            optimize.brentq(lambda g: (self.mean_power(g) or 0.0) - target, 0.0, 1.0, xtol=1e-6)
        )

    def estimates(self) -> list[Estimate]:
        out = []
        for i in range(self.difference.size):
            size, bases = int(self.n[i]), int(self.n_bases[i])
            if bases == 0 or not np.isfinite(self.low[i]):
                out.append(
                    Estimate.insufficient(
                        n=size,
                        n_clusters=bases,
                        unit="difference",
                        method=self.method,
                        reason="no base scenario judged in both variants"
                        if bases == 0
                        else "too few base scenarios to estimate a variance",
                    )
                )
                continue
            out.append(
                Estimate(
                    value=float(self.difference[i]),
                    low=float(self.low[i]),
                    high=float(self.high[i]),
                    method=self.method,
                    confidence=self.confidence,
                    n=size,
                    n_clusters=bases,
                    unit="difference",
                )
            )
        return out


def _shrunk_rates(passed: NDArray, n: NDArray) -> NDArray[np.float64]:
    """Per metric and model, its rate over both variants (the rate under the null of no
    teen-adult difference) shrunk by one outcome towards the metric's rate, itself shrunk by
    half an outcome towards 1/2 -- ``[g, t]``."""
    y_model, n_model = passed.sum(axis=(1, 2)), n.sum(axis=(1, 2))
    metric = (y_model.sum(axis=1) + 0.5) / (n_model.sum(axis=1) + 1.0)
    return (y_model + metric[:, None]) / (n_model + 1.0)


def base_differences(
    passed: ArrayLike, n: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """``d[g, b]`` (``nan`` without a pair), its binomial variance ``[g, b]``, and the number of
    conversations in the pairs per metric."""
    y = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    pair = (m[:, :, 0] > 0) & (m[:, :, 1] > 0)  # [g, b, t]
    models = pair.sum(axis=2)
    rates = _shrunk_rates(y, m)
    with np.errstate(all="ignore"):
        cell = y / m
        gap = np.where(pair, cell[:, :, 0] - cell[:, :, 1], 0.0).sum(axis=2) / models
        noise = (rates * (1.0 - rates))[:, None, :]  # [g, 1, t]
        binomial = np.where(pair, noise / m[:, :, 0] + noise / m[:, :, 1], 0.0).sum(axis=2) / (
            models * models
        )
    present = models > 0
    size = np.where(pair[:, :, None, :], m, 0.0).sum(axis=(1, 2, 3)).astype(np.int64)
    return np.where(present, gap, np.nan), np.where(present, binomial, np.nan), size


def age_gap_test(
    passed: ArrayLike,
    n: ArrayLike,
    confidence: float = 0.95,
    *,
    moderate: bool = True,
    method: str = AGE_GAP_METHOD,
) -> AgeGapTest:
    """The test of the module docstring, vectorised over metrics.

    ``moderate=False`` gives the plain paired t on ``B - 1`` degrees of freedom (each metric
    on its own; with one model and one conversation per cell, ``scipy.stats.ttest_rel`` of
    the teen against the adult outcomes). The two "ages" can be any two paired conditions of
    the same base scenarios (two runs of one model, say); ``method`` then names them.
    """
    d, binomial, size = base_differences(passed, n)
    present = np.isfinite(d)
    bases = present.sum(axis=1)
    own_df = np.maximum(bases - 1, 0).astype(np.float64)
    with np.errstate(all="ignore"):
        mean = np.where(present, d, 0.0).sum(axis=1) / bases
        sample = np.where(present, (d - mean[:, None]) ** 2, 0.0).sum(axis=1) / own_df
        binomial_mean = np.where(present, binomial, 0.0).sum(axis=1) / bases
    # Equal differences leave a rounding residue (1e-34), not a variance.
    sample = np.where(sample < 1e-12, 0.0, sample)
    alpha = 1.0 - confidence
    se = posterior = None
    if moderate:
        rates = _shrunk_rates(np.asarray(passed, float), np.asarray(n, float))
        slope = (rates * (1.0 - rates)).sum(axis=1) / max(rates.shape[1], 1)
        # The smallest positive sample variance the lattice allows: bases (0, ..., 0, step).
        with np.errstate(all="ignore"):
            step = 2.0 * bases / size
            resolution = np.where(bases > 0, step * step / bases, 0.0)
        mixture = between_base_mixture(
            sample, own_df, binomial_mean, slope * slope, zero_below=resolution
        )
        se = np.sqrt(mixture.variances / np.maximum(bases, 1)[:, None])
        posterior = mixture.posterior
        with np.errstate(all="ignore"):
            tail = 2.0 * _scipy_stats.norm.sf(np.abs(mean)[:, None] / se)
        p = (posterior * tail).sum(axis=1)
        half = _critical(se, posterior, alpha)
        variance = (posterior * mixture.variances).sum(axis=1)
        df = np.full(mean.shape, np.inf)
        testable = bases > 0
    else:
        with np.errstate(all="ignore"):
            variance = np.where(own_df > 0, sample, np.nan)
            plain_se = np.sqrt(variance / bases)
            q = _scipy_stats.t.ppf(1.0 - alpha / 2.0, own_df)
            p = 2.0 * _scipy_stats.t.sf(np.abs(mean) / plain_se, own_df)
            # Equal differences: a point, p 1 at zero and 0 elsewhere.
            p = np.where(plain_se == 0.0, np.where(mean == 0.0, 1.0, 0.0), p)
            half = q * plain_se
        df = own_df
        testable = own_df > 0
        method = PLAIN_PAIRED_METHOD
    nan = np.full(mean.shape, np.nan)
    return AgeGapTest(
        difference=np.where(bases > 0, mean, np.nan),
        low=np.where(testable, np.clip(mean - half, -1.0, 1.0), nan),
        high=np.where(testable, np.clip(mean + half, -1.0, 1.0), nan),
        p_value=np.where(testable, p, nan),
        variance=np.where(testable, variance, nan),
        df=np.where(testable, df, nan),
        n_bases=bases.astype(np.int64),
        n=size,
        confidence=confidence,
        method=method,
        se=se,
        posterior=posterior,
        half_width=half if moderate else None,
    )


def _critical(se: NDArray, posterior: NDArray, alpha: float) -> NDArray[np.float64]:
    """Per metric, the half-width ``h`` with ``P(|mean - true| > h) = alpha`` over the
    posterior: the differences within ``mean +- h`` are those the test does not reject, so
    the interval excludes 0 exactly when the p-value is below ``alpha``."""
    low = np.zeros(se.shape[0])
    high = np.full(se.shape[0], 4.0)
    for _ in range(60):
        mid = (low + high) / 2.0
        tail = (posterior * 2.0 * _scipy_stats.norm.sf(mid[:, None] / se)).sum(axis=1)
        low, high = np.where(tail > alpha, mid, low), np.where(tail > alpha, high, mid)
    return high


@dataclass(frozen=True)
class BetweenBaseMixture:
    """Per metric ``g``, the variance of one base difference is ``variances[g, k]`` (its
    binomial part plus the grid's ``tau^2_k``) with posterior probability ``posterior[g, k]``;
    ``weights`` is the distribution of ``tau^2`` over the metrics."""

    grid: NDArray[np.float64]
    weights: NDArray[np.float64]
    variances: NDArray[np.float64]
    posterior: NDArray[np.float64]


# Points of the grid on which the between-base variance's distribution is estimated.
GRID_POINTS = 40


def between_base_mixture(
    sample: ArrayLike,
    own_df: ArrayLike,
    binomial: ArrayLike,
    scale: ArrayLike,
    *,
    zero_below: ArrayLike | None = None,
    iterations: int = 1000,
) -> BetweenBaseMixture:
    """The distribution of the between-base variance over metrics, estimated from all of
    them, and each metric's posterior under it.

    Nonparametric maximum likelihood (Kiefer and Wolfowitz; by EM) on a grid of ``tau^2``
    from 0 to beyond the largest sample variance, with ``s^2_g (B - 1) / (binomial_g +
    tau^2) ~ chi^2_{B-1}``. A metric's own degrees of freedom then say where in that
    distribution it sits: one whose bases disagree a lot keeps a large variance, one whose
    bases agree does not drop to its binomial part. An inverse-gamma prior (the moderated t)
    has the wrong shape for the spread of between-base variances of the simulated releases:
    its moment fit put the prior degrees of freedom at infinity in some releases, and metrics
    with large gaps between bases were then "significant" under a true null at two to three
    times their level.

    Pass rates are counts, so equal base differences (sample variance 0) are far more common
    than a continuous model allows: a zero counts as censored below ``zero_below`` (per
    metric, the smallest positive variance its lattice of rates allows; by default the
    smallest positive sample variance of all metrics). A metric with one base has no
    variance of its own and gets the distribution of all metrics.
    """
    s2 = np.asarray(sample, dtype=np.float64)
    d = np.asarray(own_df, dtype=np.float64)
    b = np.asarray(binomial, dtype=np.float64)
    b = np.where(np.isfinite(b), b, 0.0)
    w = np.asarray(scale, dtype=np.float64) * np.ones_like(b)
    own = (d > 0) & np.isfinite(s2)
    positive = own & (s2 > 0)
    with np.errstate(all="ignore"):
        reach = s2 / w
    top = float(reach[positive].max()) if positive.any() else 1.0
    grid = np.concatenate([[0.0], np.geomspace(top * 1e-3, top * 4.0, GRID_POINTS - 1)])
    # Never zero: a metric at 0 % in both variants still has some variance.
    variances = np.maximum(b[:, None] + w[:, None] * grid[None, :], 1e-8)
    if zero_below is None:
        floor = np.full(s2.shape, float(s2[positive].min()) if positive.any() else 0.0)
    else:
        floor = np.asarray(zero_below, dtype=np.float64) * np.ones_like(s2)
    # Below a floor of 0 a zero says nothing.
    own &= (s2 > 0) | (floor > 0)
    with np.errstate(all="ignore"):
        scaled = np.where(own, d, 1.0)[:, None] / variances
        chi = _scipy_stats.chi2(np.where(own, d, 1.0)[:, None])
        log_like = np.where(
            (s2 > 0)[:, None],
            chi.logpdf(np.where(own, s2, 0.0)[:, None] * scaled) + np.log(scaled),
            chi.logcdf(floor[:, None] * scaled),
        )
    log_like = np.where(own[:, None], log_like, 0.0)
    like = np.exp(log_like - log_like.max(axis=1, keepdims=True))
    weights = np.full(grid.size, 1.0 / grid.size)
    fitted = like[own]
    for _ in range(iterations if fitted.shape[0] else 0):
        joint = fitted * weights
        updated = (joint / joint.sum(axis=1, keepdims=True)).mean(axis=0)
        converged = np.abs(updated - weights).max() < 1e-10
        weights = updated
        if converged:
            break
    posterior = like * weights
    posterior /= posterior.sum(axis=1, keepdims=True)
    return BetweenBaseMixture(grid, weights, variances, posterior)
