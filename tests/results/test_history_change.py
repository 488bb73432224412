"""A model's change between two runs, paired on shared base scenarios, against a hand sum."""

import math

import pytest
from scipy import stats

from results.services.history_change import paired_change


def test_the_paired_change_matches_a_hand_computation():
    # Three base scenarios (each of its own metric, so unstratified), two conversations each.
    later = {(1, 0): (2, 2), (2, 0): (1, 2), (3, 0): (0, 2)}
    earlier = {(1, 0): (1, 2), (2, 0): (0, 2), (3, 0): (0, 2), (9, 0): (2, 2)}
    change = paired_change(later, earlier)
    assert change["paired"] is True
    assert change["n_shared"] == 3  # the cluster only the earlier run has is left out
    # Rates 3/6 and 1/6; residuals (y - p n) / N give differences (1, 1, -2) / 18 per cluster,
    # mean 0, so the variance is 3/2 · (1 + 1 + 4) / 324 = 1/36 and the standard error 1/6.
    estimate = change["estimate"]
    assert estimate["value"] == pytest.approx(1 / 3)
    q = stats.t.ppf(0.975, 2)
    # On two degrees of freedom the t interval's upper bound (1.05) passes what two rates can
    # differ by; the published bounds are Newcombe's hybrid score interval instead. The rates'
    # variances 3/2 · (1 + 0 + 1) / 36 = 1/12 and 3/2 · (4 + 1 + 1) / 324 = 1/36, against the
    # binomial 1/24 and 5/216, are design effects 2 and 6/5: effective sizes 3 and 5; their
    # covariance 3/2 · (2/3 + 1/3) / 36 = 1/24, a correlation of 1/24 / sqrt(1/432).
    assert 1 / 3 + q / 6 > 1
    later_low, later_high = _wilson(0.5, 3.0, q)
    earlier_low, earlier_high = _wilson(1 / 6, 5.0, q)
    r = (1 / 24) / math.sqrt(1 / 432)
    a, b = 0.5 - later_low, earlier_high - 1 / 6
    c, d = later_high - 0.5, 1 / 6 - earlier_low
    assert estimate["low"] == pytest.approx(1 / 3 - math.sqrt(a * a + b * b - 2 * r * a * b))
    assert estimate["high"] == pytest.approx(1 / 3 + math.sqrt(c * c + d * d - 2 * r * c * d))
    assert -1 < estimate["low"] < 1 / 3 < estimate["high"] < 1


def _wilson(p, n, z):
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_runs_without_shared_scenarios_are_not_paired():
    change = paired_change({(1, 0): (2, 2), (1, 1): (1, 2)}, {(2, 0): (1, 2), (2, 1): (0, 2)})
    assert change["paired"] is False
    assert change["n_shared"] == 0
    assert "paired" in change["reason"]
