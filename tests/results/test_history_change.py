"""A model's change between two runs, paired on shared base scenarios, against a hand sum."""

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
    half = stats.t.ppf(0.975, 2) / 6
    assert estimate["low"] == pytest.approx(1 / 3 - half)
    # On two degrees of freedom the upper bound (1.05) passes what two rates can differ by.
    assert 1 / 3 + half > 1
    assert estimate["high"] == 1.0


def test_runs_without_shared_scenarios_are_not_paired():
    change = paired_change({(1, 0): (2, 2), (1, 1): (1, 2)}, {(2, 0): (1, 2), (2, 1): (0, 2)})
    assert change["paired"] is False
    assert change["n_shared"] == 0
    assert "paired" in change["reason"]
