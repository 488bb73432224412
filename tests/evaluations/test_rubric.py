"""The rubric formula on examples worked by hand."""

import pytest

from evaluations.rubric import aggregate_score, item_score


def test_all_positive_criteria_met_scores_one():
    assert item_score([5, 3, 2], [True, True, True]) == 1.0


def test_partial_credit_is_met_points_over_positive_points():
    # 5 + 2 met of 5 + 3 + 2 reachable = 7 / 10
    assert item_score([5, 3, 2], [True, False, True]) == pytest.approx(0.7)


def test_met_negative_criterion_subtracts_but_is_not_reachable():
    # Met: +5 and −4 → 1; reachable: 5 + 3 = 8 (the −4 is a penalty, not a goal) → 0.125
    assert item_score([5, 3, -4], [True, False, True]) == pytest.approx(0.125)


def test_unmet_negative_criterion_changes_nothing():
    # Met: +8 only; reachable 8 + 2 = 10 → 0.8 (avoiding the penalised behaviour earns nothing)
    assert item_score([8, 2, -10], [True, False, False]) == pytest.approx(0.8)


def test_score_is_clipped_at_zero():
    # Met: +2 and −10 → −8; reachable 2 + 6 = 8 → −1 → clipped to 0
    assert item_score([2, 6, -10], [True, False, True]) == 0.0


def test_no_positive_points_is_an_error():
    with pytest.raises(ValueError, match="no criterion with positive points"):
        item_score([-3, -5], [False, True])


@pytest.mark.parametrize("points", [[0, 3], [11, 2], [-11, 2], [2.5, 3]])
def test_out_of_range_or_zero_points_are_rejected(points):
    with pytest.raises(ValueError, match="points"):
        item_score(points, [True, True])


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="one met/not-met value per criterion"):
        item_score([1, 2], [True])


def test_aggregate_is_the_mean_of_item_scores():
    # (0.125 + 1 + 0.5) / 3 = 1.625 / 3
    assert aggregate_score([0.125, 1.0, 0.5]) == pytest.approx(1.625 / 3)


def test_aggregate_is_clipped_and_rejects_nothing():
    assert aggregate_score([1.0, 1.0]) == 1.0
    assert aggregate_score([0.0]) == 0.0
    with pytest.raises(ValueError, match="at least one item"):
        aggregate_score([])


def test_rubric_module_needs_no_django():
    import subprocess
    import sys

    code = (
        "import sys; import evaluations.rubric as r; "
        "assert 'django' not in sys.modules, 'django imported'; print(r.item_score([1], [True]))"
    )
    result = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1.0"
