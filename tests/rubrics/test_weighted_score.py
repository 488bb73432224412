"""The audience re-weighting of HealthBench's item score."""

import pytest

from rubrics.scoring import item_score, weighted_item_score


def test_unit_weights_give_healthbench_item_score():
    points, met = [5, 3, -4], [True, False, True]
    assert weighted_item_score(points, met, [1, 1, 1]) == pytest.approx(item_score(points, met))


def test_weights_scale_each_criterion_points():
    # (5·0.5 − 4·2) ÷ (5·0.5 + 3·1) = −5.5 ÷ 5.5
    assert weighted_item_score([5, 3, -4], [True, False, True], [0.5, 1, 2]) == pytest.approx(-1)


def test_no_positive_weighted_criterion_has_no_score_and_bad_weights_are_refused():
    assert weighted_item_score([5, -4], [True, True], [0, 1]) is None
    with pytest.raises(ValueError, match="non-negative weight"):
        weighted_item_score([5], [True], [-1])
    with pytest.raises(ValueError, match="non-negative weight"):
        weighted_item_score([5, 2], [True, True], [1])
