"""Rubric intervals keep a positive width and their coverage from two items up, at 0 and 1
included; the point estimate stays HealthBench's."""

import numpy as np
import pytest

from rubrics.scoring import aggregate_estimate, aggregate_score
from stats.bounded_means import bounded_rate_interval, clipped_mean_interval

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


@pytest.mark.slow(reason="a coverage simulation")
def test_rubric_intervals_cover_from_two_items_up_at_zero_and_one_included():
    figures = coverage(clipped_mean_interval, items=(2, 3, 9, 27), replications=400)
    for label, items, rate, error in figures:
        print(f"{label:34} G = {items:2}: {100 * rate:5.1f} % ± {100 * error:.1f}")
    low = [(f, g, r, e) for f, g, r, e in figures if r + 2 * e < 0.93]
    assert not low, low
    # Three perfect items from a 98 % proportion no longer read [1, 1] and miss.
    assert np.mean([r for f, g, r, e in figures if f == "proportion 98 %"]) > 0.95


def test_teen_minus_adult_rubric_differences_cover_and_never_collapse():
    from stats.bounded_means import clipped_mean_difference_interval

    from .rubric_simulation import clipped_truth, item_scores

    value, low, high, _ = clipped_mean_difference_interval([1.0, 1.0, 1.0], [1.0, 1.0])
    assert value == 0.0
    assert low < 0.0 < high
    rng = np.random.default_rng(31)
    for teen, adult in ((6.0, 6.0), (0.0, 0.0), (1.0, 2.0), (-1.0, 3.0)):
        truth = clipped_truth(rng, teen, 1.5) - clipped_truth(rng, adult, 1.5)
        for g in (2, 5, 27):
            a = item_scores(rng, 300 * g, teen, 1.5).reshape(300, g)
            b = item_scores(rng, 300 * g, adult, 1.5).reshape(300, g)
            bounds = [clipped_mean_difference_interval(x, y) for x, y in zip(a, b, strict=True)]
            rate = float(np.mean([lo <= truth <= hi for _, lo, hi, _ in bounds]))
            error = float(np.sqrt(0.05 * 0.95 / 300))
            print(
                f"teen {teen:+} adult {adult:+}, G = {g:2}: {100 * rate:5.1f} % ± {100 * error:.1f}"
            )
            assert rate + 2 * error >= 0.93, (teen, adult, g, rate)


@pytest.mark.parametrize("theta", [-0.3, -0.01, 0.0, 0.004, 0.5, 0.97, 1.0, 1.2])
@pytest.mark.parametrize("se", [0.0, 1e-6, 0.02, 0.2])
def test_a_bounded_rate_lies_in_its_interval_inside_0_1_and_holds_the_unbounded_interval(theta, se):
    q = 2.1
    value, low, high, n_eff = bounded_rate_interval(
        theta, se, q, fallback_n=40, most_n=600, confidence=0.95
    )
    assert value == min(1.0, max(0.0, theta))
    assert 0.0 <= low <= value <= high <= 1.0
    assert high > low
    assert 1.0 <= n_eff <= 600
    if theta - q * se < 1 and theta + q * se > 0:
        assert low <= max(0.0, theta - q * se) + 1e-15
        assert high >= min(1.0, theta + q * se) - 1e-15
