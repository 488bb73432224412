"""Rubric intervals keep a positive width and their coverage from two items up, at 0 and 1
included; the point estimate stays HealthBench's."""

import numpy as np
import pytest

from rubrics.scoring import aggregate_estimate, aggregate_score
from stats.bounded_means import clipped_mean_interval

from .rubric_simulation import coverage


@pytest.mark.parametrize(
    "scores", [[1.0, 1.0, 1.0], [0.0, 0.0], [0.5, 0.5, 0.5], [-1.0, -0.5, -2.0], [1.0] * 40]
)
def test_a_rubric_figure_of_equal_items_is_not_certain(scores):
    estimate, _ = aggregate_estimate(scores)
    assert estimate.value == aggregate_score(scores)
    assert estimate.low < estimate.high
    assert estimate.low <= estimate.value <= estimate.high
    assert estimate.low >= 0.0
    assert estimate.high <= 1.0


def test_three_perfect_items_leave_room_below_one():
    estimate, _ = aggregate_estimate([1.0, 1.0, 1.0])
    assert estimate.high == 1.0
    assert estimate.low < 0.6  # Wilson on three items: 0.44


def test_one_item_has_no_interval():
    assert clipped_mean_interval([0.7]) is None


def test_rubric_intervals_cover_from_two_items_up_at_zero_and_one_included():
    figures = coverage(clipped_mean_interval, items=(2, 3, 9, 27), replications=400)
    for label, items, rate, error in figures:
        print(f"{label:34} G = {items:2}: {100 * rate:5.1f} % ± {100 * error:.1f}")
    low = [(f, g, r, e) for f, g, r, e in figures if r + 2 * e < 0.93]
    assert not low, low
    # Three perfect items from a 98 % proportion no longer read [1, 1] and miss.
    assert np.mean([r for f, g, r, e in figures if f == "proportion 98 %"]) > 0.95
