"""Simulated rubric items, scored as HealthBench scores them, for the coverage of rubric
intervals (``tests/stats/test_bounded_means.py``).

An item has 6 to 12 criteria (HealthBench averages about 11), each worth 1 to 10 points, a
quarter of them penalties; a reply meets a positive criterion with probability
``logistic(quality + criterion noise)`` and a penalty with the complement, the item's quality
drawn around ``mu`` with SD ``sd`` (items differ in difficulty). The true figure is the clipped
mean over a large population of such items.
"""

from __future__ import annotations

import numpy as np


def item_scores(rng: np.random.Generator, size: int, mu: float, sd: float) -> np.ndarray:
    """``size`` unclipped item scores (points met / positive points reachable)."""
    criteria = 12
    present = np.arange(criteria)[None, :] < rng.integers(6, criteria + 1, size)[:, None]
    points = rng.integers(1, 11, (size, criteria)).astype(np.float64)
    penalty = rng.random((size, criteria)) < 0.25
    penalty[:, 0] = False  # every item can be reached
    quality = rng.normal(mu, sd, size)[:, None] + rng.normal(0.0, 1.0, (size, criteria))
    p_met = 1.0 / (1.0 + np.exp(-quality))
    met = rng.random((size, criteria)) < np.where(penalty, 1.0 - p_met, p_met)
    signed = np.where(penalty, -points, points) * present
    reachable = np.where(penalty, 0.0, signed).sum(axis=1)
    return (signed * met).sum(axis=1) / reachable


def clipped_truth(rng: np.random.Generator, mu: float, sd: float, size: int = 200_000) -> float:
    return float(min(1.0, max(0.0, item_scores(rng, size, mu, sd).mean())))


# (label, population) scenarios: proportions (every item 0 or 1) at 0 %, near and at 100 %,
# and rubric scores from mostly harmful (clipped to 0) to nearly perfect.
SCENARIOS = (
    ("proportion 0 %", ("binary", 0.0)),
    ("proportion 2 %", ("binary", 0.02)),
    ("proportion 50 %", ("binary", 0.5)),
    ("proportion 98 %", ("binary", 0.98)),
    ("proportion 100 %", ("binary", 1.0)),
    ("scores, mostly harmful (true 0)", ("scores", -2.0)),
    ("scores, true about 0.1", ("scores", -1.0)),
    ("scores, true about 0.3", ("scores", 0.0)),
    ("scores, true about 0.7", ("scores", 2.0)),
    ("scores, nearly perfect", ("scores", 6.0)),
)


def coverage(
    interval, *, items: tuple[int, ...], replications: int, seed: int = 23, sd: float = 1.5
) -> list[tuple[str, int, float, float]]:
    """(scenario, items, coverage, Monte Carlo standard error) of ``interval(scores)`` -> (low,
    high) for every scenario and number of items."""
    rng = np.random.default_rng(seed)
    out = []
    for label, (kind, parameter) in SCENARIOS:
        truth = parameter if kind == "binary" else clipped_truth(rng, parameter, sd)
        for g in items:
            if kind == "binary":
                samples = (rng.random((replications, g)) < parameter).astype(np.float64)
            else:
                samples = item_scores(rng, replications * g, parameter, sd).reshape(-1, g)
            held = [low <= truth <= high for low, high in map(interval, samples)]
            rate = float(np.mean(held))
            error = float(np.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / replications))
            out.append((label, g, rate, error))
    return out
