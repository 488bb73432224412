"""A judge with a known bias on clustered conversations, and a random expert slice of them: the
simulation the calibrated pass rate is checked against (the suite and
``benchmarks/ppi_coverage.py`` share it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from stats import calibrated_mean, proportion_estimate


@dataclass(frozen=True)
class Target:
    """One target model: its rate per polarity on the logit scale, and how its judge errs."""

    name: str
    logit_by_polarity: tuple[float, float]
    false_pass: tuple[float, float]  # judge says pass when experts say fail, per polarity
    false_fail: tuple[float, float]  # judge says fail when experts say pass, per polarity


# The judge is kind to one target and harsh to the other: a bias that depends on the target.
TARGETS = (
    Target("kindly judged", (0.8, -0.3), (0.30, 0.20), (0.05, 0.05)),
    Target("harshly judged", (0.2, 0.6), (0.03, 0.05), (0.25, 0.15)),
)
# Rates on the bounds: every conversation fails (or passes) in the experts' eyes while the
# judge still errs, so the uncorrected PPI estimate falls on either side of the bound.
BOUNDARY_TARGETS = (
    Target("always fails", (-np.inf, -np.inf), (0.30, 0.20), (0.05, 0.05)),
    Target("always passes", (np.inf, np.inf), (0.03, 0.05), (0.25, 0.15)),
)
SCENARIOS_PER_POLARITY = 80
CONVERSATIONS_PER_SCENARIO = 6
# Sd of the base scenarios' effects on the logit scale: strongly heterogeneous scenarios.
SCENARIO_SD = 1.0
EXPERT_SAMPLE = (180, 120)  # per polarity: stratified, with unequal inclusion probabilities


def true_rate(target: Target) -> float:
    """The rate over the population of base scenarios (equal numbers per polarity): the mean of
    logistic(mu + u), u ~ N(0, SCENARIO_SD^2), by Gauss-Hermite quadrature."""
    nodes, weights = hermegauss(80)
    weights = weights / weights.sum()
    return float(
        np.mean(
            [
                weights @ (1 / (1 + np.exp(-(mu + SCENARIO_SD * nodes))))
                for mu in target.logit_by_polarity
            ]
        )
    )


@dataclass(frozen=True)
class Draw:
    judge: np.ndarray
    expert: np.ndarray  # nan outside the calibration sample
    inclusion: np.ndarray
    polarity: np.ndarray
    scenario: np.ndarray


def draw(
    target: Target,
    rng: np.random.Generator,
    *,
    scenarios_per_polarity: int = SCENARIOS_PER_POLARITY,
    expert_sample: tuple[int, int] = EXPERT_SAMPLE,
) -> Draw:
    g = 2 * scenarios_per_polarity
    m = CONVERSATIONS_PER_SCENARIO
    polarity_of = np.repeat([0, 1], scenarios_per_polarity)
    mu = np.asarray(target.logit_by_polarity)[polarity_of]
    p = 1 / (1 + np.exp(-(mu + SCENARIO_SD * rng.standard_normal(g))))
    scenario = np.repeat(np.arange(g), m)
    polarity = polarity_of[scenario]
    truth = (rng.random(g * m) < p[scenario]).astype(float)
    flip = np.where(
        truth == 1,
        np.asarray(target.false_fail)[polarity],
        np.asarray(target.false_pass)[polarity],
    )
    judge = np.where(rng.random(g * m) < flip, 1 - truth, truth)
    expert = np.full(g * m, np.nan)
    inclusion = np.empty(g * m)
    for h, size in enumerate(expert_sample):
        members = np.flatnonzero(polarity == h)
        chosen = rng.choice(members, size=size, replace=False)
        expert[chosen] = truth[chosen]
        inclusion[members] = size / members.size
    return Draw(judge, expert, inclusion, polarity, scenario)


def intervals(
    d: Draw, *, bootstrap_resamples: int = 400, seed: int = 0, judge_only: bool = True
) -> dict:
    """The three figures one replication publishes: calibrated (PPI++), experts only, and
    (unless ``judge_only`` is false) judge only."""
    common = {"inclusion_probability": d.inclusion, "clusters": d.scenario, "strata": d.polarity}
    figures = {
        "calibrated": calibrated_mean(d.judge, d.expert, **common),
        "experts only": calibrated_mean(d.judge, d.expert, lam=0.0, **common),
    }
    if judge_only:
        figures["judge only"] = proportion_estimate(
            d.judge, d.scenario, n_resamples=bootstrap_resamples, seed=seed
        )
    return figures


def coverage(
    target: Target, replications: int, seed: int, *, judge_only: bool = True, **design: object
) -> dict[str, dict[str, float]]:
    """Per figure: share of intervals covering the true rate, mean width, mean value, and the
    share of calibrated figures inside [0, 1] with their point inside an interval of positive
    width (``design``: :func:`draw`'s keywords)."""
    rng = np.random.default_rng(seed)
    truth = true_rate(target)
    hits: dict[str, list] = {}
    bounded: list[bool] = []
    for r in range(replications):
        d = draw(target, rng, **design)  # type: ignore[arg-type]
        for name, e in intervals(d, seed=r, judge_only=judge_only).items():
            hits.setdefault(name, []).append((e.low <= truth <= e.high, e.high - e.low, e.value))
            if name != "judge only":
                bounded.append(0.0 <= e.low <= e.value <= e.high <= 1.0 and e.high > e.low)
    return {
        name: {
            "coverage": float(np.mean([h[0] for h in rows])),
            "width": float(np.mean([h[1] for h in rows])),
            "mean": float(np.mean([h[2] for h in rows])),
            "truth": truth,
            "replications": replications,
            "bounded": float(np.mean(bounded)),
        }
        for name, rows in hits.items()
    }
