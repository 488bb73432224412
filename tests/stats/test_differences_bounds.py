"""A paired difference of two rates never reaches past what two rates can differ by."""

import numpy as np

from stats.differences import paired_rate_differences


def test_a_few_cluster_difference_interval_stays_within_minus_one_and_one():
    # Three clusters, two degrees of freedom: the t interval of +0.33 is wider than 2.
    passed = np.array([[2, 2], [2, 0], [2, 2]])
    n = np.array([[2, 2], [2, 2], [2, 2]])
    result = paired_rate_differences(passed, n, [0, 1, 2])
    low, high = result.t_bounds()
    assert low[0] < -1.0 or high[0] > 1.0  # the raw t interval overshoots here
    estimate = result.estimates()[0]
    assert -1.0 <= estimate.low < estimate.value < estimate.high <= 1.0
    assert estimate.value == np.float64(1.0 - 4 / 6)
