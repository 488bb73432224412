"""Coverage of the bounded constructors at their extremes: true values 0 and 1 and between, one
to twenty clusters and the demo's sizes, with the share of zero-width intervals (which must be
0). Every interval is the one the constructor publishes.

Data sets: 0/1 outcomes in clusters of ``size`` whose own rates scatter around the true rate
with intra-cluster correlation ``ICC`` (beta-binomial; a true rate of 0 or 1 leaves nothing to
scatter); two raters (three for alpha) who each read an item's true class right with
probability ``accuracy``, the class's prevalence scattering between clusters the same way;
two models or two arms on the same clusters, their rates moving together; conversations read
three times, their own pass probability scattering within a metric by ``dispersion``.

Used by ``tests/stats/test_bounds.py`` (few replications) and ``benchmarks/coverage.py``
(section "extremes": many, with the Monte Carlo error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

import stats as statistics
from stats.estimates import Estimate

ICC = 0.3
SIZE = 2  # a base scenario's teen and adult variant
DEMO_CLUSTERS = 192  # the demo's 64 metrics x 3 base scenarios
CLUSTERS = (1, 2, 3, 20, DEMO_CLUSTERS)


@dataclass(frozen=True)
class Case:
    constructor: str
    truth: float
    clusters: int
    draw: Callable[[np.random.Generator], tuple[Estimate | tuple[float, float], float]]


def _rates(rng: np.random.Generator, p: float, clusters: int) -> np.ndarray:
    """Each cluster's own rate around ``p`` with intra-cluster correlation ``ICC``."""
    if p in (0.0, 1.0):
        return np.full(clusters, p)
    strength = (1 - ICC) / ICC
    return rng.beta(p * strength, (1 - p) * strength, clusters)


def _outcomes(rng, p, clusters, size=SIZE):
    rates = _rates(rng, p, clusters)
    return (rng.random((clusters, size)) < rates[:, None]).astype(float)


def _proportion(p: float, clusters: int, clustered: bool) -> Callable:
    """Clustered: ``clusters`` clusters of ``SIZE``; unclustered: ``clusters`` independent
    outcomes."""

    def draw(rng):
        if clustered:
            y = _outcomes(rng, p, clusters).ravel()
            labels = np.repeat(np.arange(clusters), SIZE)
        else:
            y, labels = (rng.random(clusters) < p).astype(float), None
        return statistics.proportion_estimate(y, labels), p

    return draw


def _labels(rng, accuracy, prevalence, clusters, raters):
    truth = _outcomes(rng, prevalence, clusters, 6)  # six items per cluster
    right = rng.random((raters, *truth.shape)) < accuracy
    return np.where(right, truth, 1 - truth).reshape(raters, -1)


def _chance(accuracy: float, prevalence: float) -> float:
    said = prevalence * accuracy + (1 - prevalence) * (1 - accuracy)
    return said * said + (1 - said) * (1 - said)


def _kappa_truth(accuracy: float, prevalence: float = 0.5) -> float:
    observed = accuracy**2 + (1 - accuracy) ** 2
    chance = _chance(accuracy, prevalence)
    return (observed - chance) / (1 - chance)


def _kappa(accuracy: float, clusters: int, resamples: int) -> Callable:
    def draw(rng):
        a, b = _labels(rng, accuracy, 0.5, clusters, 2)
        labels = np.repeat(np.arange(clusters), 6)
        return statistics.cohen_estimate(a, b, labels, n_resamples=resamples), _kappa_truth(
            accuracy
        )

    return draw


def _alpha(accuracy: float, clusters: int, resamples: int) -> Callable:
    # Nominal alpha of many units: 1 - D_o / D_e, two readings of one unit disagreeing with
    # probability 2 a (1 - a), two readings of any units with 2 q (1 - q).
    said = 0.5
    truth = 1 - accuracy * (1 - accuracy) / (said * (1 - said))

    def draw(rng):
        data = _labels(rng, accuracy, 0.5, clusters, 3)
        labels = np.repeat(np.arange(clusters), 6)
        return statistics.krippendorff_estimate(
            data, "nominal", labels, n_resamples=resamples
        ), truth

    return draw


def _paired(rng, rates, clusters, size):
    """Two sides' 0/1 outcomes on the same clusters, each cluster's shift shared."""
    shift = rng.normal(0.0, 1.0, clusters)
    out = []
    for p in rates:
        if p in (0.0, 1.0):
            own = np.full(clusters, p)
        else:
            own = scipy_stats.norm.cdf(scipy_stats.norm.ppf(p) + 0.8 * shift)
            # The cluster rates' mean is p only on average over clusters; the target of the
            # interval is the population rate, the mean of own over the shift's distribution.
        out.append((rng.random((clusters, size)) < own[:, None]).astype(float))
    return out


def _population_rate(p: float) -> float:
    if p in (0.0, 1.0):
        return p
    x, w = np.polynomial.hermite_e.hermegauss(60)
    return float((scipy_stats.norm.cdf(scipy_stats.norm.ppf(p) + 0.8 * x) * w).sum() / w.sum())


def _difference(rates: tuple[float, float], clusters: int) -> Callable:
    truth = _population_rate(rates[0]) - _population_rate(rates[1])

    def draw(rng):
        a, b = _paired(rng, rates, clusters, SIZE)
        result = statistics.paired_rate_differences(
            np.column_stack([a.sum(1), b.sum(1)]), np.full((clusters, 2), SIZE), np.zeros(clusters)
        )
        low, high = result.bounds(simultaneous=False)
        return Estimate(result.difference[0], low[0], high[0], n=2 * clusters * SIZE), truth

    return draw


def _shift(rates: tuple[float, float], clusters: int) -> Callable:
    truth = _population_rate(rates[1]) - _population_rate(rates[0])

    def draw(rng):
        original, swapped = _paired(rng, rates, clusters, SIZE)
        scenarios = np.repeat(np.arange(clusters), SIZE)
        return statistics.pass_rate_shift(
            original.ravel(), scenarios, swapped.ravel(), scenarios
        ), truth

    return draw


def _majority_rate(p: np.ndarray, dispersion: np.ndarray) -> np.ndarray:
    """Population rate of a majority of three readings of conversations whose own pass
    probability is Beta with mean ``p`` and the given dispersion (0: every one at ``p``)."""
    grid = (np.arange(400) + 0.5) / 400
    out = np.empty(p.size)
    for i, (mean, spread) in enumerate(zip(p, dispersion, strict=True)):
        if spread == 0:
            out[i] = 3 * mean**2 - 2 * mean**3
            continue
        strength = (1 - spread) / spread
        density = scipy_stats.beta.pdf(grid, mean * strength, (1 - mean) * strength)
        out[i] = (density * (3 * grid**2 - 2 * grid**3)).sum() / density.sum()
    return out


def _single_vs_majority(metrics: int, spread: float, resamples: int) -> Callable:
    rng0 = np.random.default_rng(metrics)
    p = rng0.uniform(0.2, 0.8, metrics)
    dispersion = rng0.uniform(0.0, spread, metrics) if spread else np.zeros(metrics)
    truth = float(scipy_stats.spearmanr(p, _majority_rate(p, dispersion)).statistic)

    def draw(rng):
        per_metric = 24
        metric = np.repeat(np.arange(metrics), per_metric)
        base = np.repeat(np.arange(metrics * 3), per_metric // 3)
        own = np.repeat(p, per_metric)
        spread_of = np.repeat(dispersion, per_metric)
        varied = spread_of > 0
        strength = np.where(varied, (1 - spread_of) / np.where(varied, spread_of, 1), 1.0)
        q = np.where(varied, rng.beta(own * strength, (1 - own) * strength), own)
        readings = (rng.random((metric.size, 3)) < q[:, None]).astype(float)
        return statistics.single_vs_majority(readings, metric, base, n_resamples=resamples), truth

    return draw


def cases(resamples: int = 1_000) -> Iterator[Case]:
    """Every constructor at true values 0, 1 and between, with 1-3, 20 and the demo's clusters
    (two or more where the figure needs them)."""
    for p in (0.0, 0.02, 0.3, 0.98, 1.0):
        for g in CLUSTERS:
            yield Case("proportion, clustered", p, g, _proportion(p, g, clustered=True))
        for n in (2, 3, 20, 60, DEMO_CLUSTERS):
            yield Case("proportion, unclustered", p, n, _proportion(p, n, clustered=False))
    for accuracy in (0.5, 0.8, 1.0):
        for g in CLUSTERS:
            yield Case("Cohen's kappa", _kappa_truth(accuracy), g, _kappa(accuracy, g, resamples))
            yield Case(
                "Krippendorff's alpha",
                1 - accuracy * (1 - accuracy) / 0.25,
                g,
                _alpha(accuracy, g, resamples),
            )
    for rates in ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.6, 0.4), (0.98, 0.9)):
        truth = _population_rate(rates[0]) - _population_rate(rates[1])
        for g in CLUSTERS[1:]:
            yield Case("model difference", truth, g, _difference(rates, g))
            yield Case("swap shift", -truth, g, _shift(rates, g))
    for spread in (0.0, 0.5):
        for metrics in (3, 20, 64):
            draw = _single_vs_majority(metrics, spread, resamples)
            truth = draw(np.random.default_rng(0))[1]
            yield Case("single vs majority", truth, metrics * 3, draw)


def run(case: Case, replications: int, seed: int) -> dict[str, float]:
    """Coverage, its Monte Carlo error, the share of zero-width intervals, and the share of
    figures with no interval (a value without bounds: one cluster of a difference)."""
    rng = np.random.default_rng(seed)
    covered = zero = missing = defined = 0
    for _ in range(replications):
        estimate, truth = case.draw(rng)
        if not estimate.defined:
            continue
        defined += 1
        if not estimate.has_interval:
            missing += 1
            continue
        assert estimate.low <= estimate.value <= estimate.high, estimate
        zero += estimate.high - estimate.low < 1e-6
        covered += estimate.low - 1e-12 <= truth <= estimate.high + 1e-12
    shown = max(defined - missing, 1)
    c = covered / shown
    return {
        "coverage": c,
        "mc_error": float(np.sqrt(max(c * (1 - c), 0.25 / shown) / shown)),
        "zero_width": zero / shown,
        "no_interval": missing / max(defined, 1),
        "defined": defined / replications,
    }
