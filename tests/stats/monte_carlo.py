"""Helpers of the bootstrap equivalence tests: a composition's values, and bounds compared
within Monte Carlo error of a resampled distribution."""

import math

import numpy as np


def assert_bounds_within_monte_carlo_error(new: dict, old_distribution: np.ndarray, key) -> None:
    """The new bounds sit at the 2.5 % and 97.5 % points of the old resampled distribution, up
    to Monte Carlo error, checked on the probability scale: that holds for the discrete
    distributions of a few clusters too, where a bound may jump between neighbouring atoms.
    Tolerance: five sd of the difference of two independent empirical quantile levels,
    5 sqrt(2 q (1 - q) / B) (0.035 at B = 500, 0.008 at B = 10,000)."""
    b = old_distribution.size
    for bound, q in (("low", 0.025), ("high", 0.975)):
        delta = 5 * math.sqrt(2 * q * (1 - q) / b)
        below = np.mean(old_distribution < new[bound] - 1e-12)
        at_or_below = np.mean(old_distribution <= new[bound] + 1e-12)
        assert below <= q + delta, (key, bound, below)
        assert at_or_below >= q - delta, (key, bound, at_or_below)


def expanded(signature) -> tuple[list[float], list[int]]:
    values, labels, label = [], [], 0
    for y, n, count in signature:
        for _ in range(count):
            values += [1.0] * y + [0.0] * (n - y)
            labels += [label] * n
            label += 1
    return values, labels
