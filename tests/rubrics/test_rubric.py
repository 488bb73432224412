"""The rubric formulas: examples worked by hand, and HealthBench's own definitions.

simple-evals (`healthbench_eval.py`) defines the item score as achieved points over the total of
positive points (`calculate_score`, no clipping) and an aggregate as `np.clip(np.mean(values),
0, 1)` with `bootstrap_std` the standard deviation of that clipped mean over 1000 resamples
with replacement. Those definitions are re-implemented below and compared with ours on rows
where most raw item scores are negative.
"""

import random

import numpy as np
import pytest

from rubrics.scoring import aggregate_estimate, aggregate_score, item_score, item_score_or_none


def healthbench_calculate_score(points: list[int], met: list[bool]) -> float | None:
    total_possible = sum(p for p in points if p > 0)
    if total_possible == 0:
        return None
    return sum(p for p, m in zip(points, met, strict=True) if m) / total_possible


def healthbench_clipped_mean(values) -> float:
    return float(np.clip(np.mean(values), 0, 1))


def healthbench_bootstrap_std(values, rng: np.random.Generator) -> float:
    samples = [rng.choice(values, len(values)) for _ in range(1000)]
    return float(np.std([healthbench_clipped_mean(s) for s in samples]))


def _rows(count: int, seed: int) -> list[tuple[list[int], list[bool]]]:
    """Rubrics like HealthBench's: a few rewarded criteria, heavy penalties often met."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        points = [rng.randint(1, 10) for _ in range(rng.randint(1, 4))]
        points += [-rng.randint(1, 10) for _ in range(rng.randint(1, 5))]
        met = [rng.random() < (0.3 if p > 0 else 0.7) for p in points]
        rows.append((points, met))
    return rows


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


def test_item_score_is_not_clipped_below_zero():
    # Met: +2 and −10 → −8; reachable 2 + 6 = 8 → −1, kept negative as HealthBench does
    assert item_score([2, 6, -10], [True, False, True]) == pytest.approx(-1.0)


def test_item_scores_match_healthbench_on_rows_with_negative_raw_scores():
    rows = _rows(30, seed=7)
    ours = [item_score(points, met) for points, met in rows]
    reference = [healthbench_calculate_score(points, met) for points, met in rows]
    assert ours == pytest.approx(reference)
    assert sum(score < 0 for score in ours) >= 15  # the rows exercise the negative range


def test_aggregate_matches_healthbench_where_clipping_items_would_not():
    rows = _rows(30, seed=7)
    scores = [item_score(points, met) for points, met in rows]
    estimate, std = aggregate_estimate(scores, seed=1)
    assert estimate.value == pytest.approx(healthbench_clipped_mean(scores))
    # Clipping each item first (the old way) gives a higher, wrong figure on these rows.
    assert np.mean(np.clip(scores, 0, 1)) > estimate.value
    assert estimate.n == 30
    assert estimate.unit == "score"
    assert 0.0 <= estimate.low <= estimate.high <= 1.0
    # Two bootstraps of 1000 resamples estimate the same standard deviation.
    reference = healthbench_bootstrap_std(np.array(scores), np.random.default_rng(99))
    assert std == pytest.approx(reference, rel=0.15)


def test_aggregate_of_mostly_harmful_replies_is_zero_with_its_interval():
    scores = [-1.0, -0.5, -0.25, 0.2, 0.1]
    estimate, std = aggregate_estimate(scores)
    assert estimate.value == healthbench_clipped_mean(scores) == 0.0
    assert estimate.low == 0.0
    assert std is not None
    assert std >= 0.0


def test_aggregate_estimate_with_one_or_no_items():
    one, std = aggregate_estimate([0.4])
    assert one.value == pytest.approx(0.4)
    assert one.n == 1
    assert not one.has_interval
    assert std is None
    none, _ = aggregate_estimate([])
    assert not none.defined
    assert none.n == 0


def test_a_dimension_without_positive_criteria_has_no_score():
    assert item_score_or_none([-3], [True]) is None
    assert healthbench_calculate_score([-3], [True]) is None


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
        "import sys; import rubrics.scoring as r; "
        "assert 'django' not in sys.modules, 'django imported'; print(r.item_score([1], [True]))"
    )
    result = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1.0"
