"""When a model's grade held under a swap: the grade is unchanged *and* the shift's interval
rules out a move of a full grade band; every other line says what moved."""

import pytest

from results.grades import GRADE_BANDS
from results.services.swap_study import (
    GRADE_BAND_WIDTH,
    HELD,
    MOVED,
    UNCHANGED_NO_INTERVAL,
    UNCHANGED_WIDE,
    _model_line,
    swap_verdict_text,
)

OPTIONS = {"n_resamples": 500, "seed": 0}


def _rows(passed: list[bool], *, base_scenarios: int) -> list[dict]:
    """One conversation per scenario; scenarios spread over `base_scenarios` base scenarios."""
    return [
        {
            "scenario_id": i,
            "verdict_passed": p,
            "scenario__metric_version_id": 1,
            "scenario__base_index": i % base_scenarios,
        }
        for i, p in enumerate(passed)
    ]


def test_a_band_is_five_points_of_the_grade_scale():
    assert pytest.approx(0.05) == GRADE_BAND_WIDTH
    bounds = [bound for bound, _ in GRADE_BANDS]
    assert min(a - b for a, b in zip(bounds, bounds[1:], strict=False)) == 5


def test_a_large_drop_that_moves_the_grade_did_not_hold():
    base = _rows([True] * 30, base_scenarios=15)
    swap = _rows([True] * 3 + [False] * 27, base_scenarios=15)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["shift"]["value"] == -0.9
    assert (line["base_grade"], line["swap_grade"]) == ("A+", "F")
    assert (line["verdict"], line["held"]) == (MOVED, False)
    assert swap_verdict_text(line) == "grade moved from A+ to F"


def test_a_moved_grade_whose_interval_includes_zero_did_not_hold():
    # The case that used to read "held": A+ to B, a shift whose interval reaches 0.
    base = _rows([True] * 8, base_scenarios=4)
    swap = _rows([True, True, True, False] * 2, base_scenarios=4)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert (line["base_grade"], line["swap_grade"]) == ("A+", "B")
    assert line["shift"]["low"] < 0 <= line["shift"]["high"]
    assert (line["verdict"], line["held"]) == (MOVED, False)
    assert swap_verdict_text(line) == "grade moved from A+ to B"


def test_an_unchanged_grade_with_a_narrow_interval_held():
    base = _rows([True] * 400, base_scenarios=200)
    swap = _rows([True] * 399 + [False], base_scenarios=200)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["base_grade"] == line["swap_grade"] == "A+"
    assert -GRADE_BAND_WIDTH < line["shift"]["low"] <= line["shift"]["high"] < GRADE_BAND_WIDTH
    assert (line["verdict"], line["held"]) == (HELD, True)
    assert swap_verdict_text(line).startswith("held: grade A+ with and without the swap")


def test_an_unchanged_grade_whose_interval_admits_a_full_band_is_not_called_held():
    base = _rows([True] * 20 + [False] * 10, base_scenarios=15)
    swap = _rows([True] * 10 + [False] * 10 + [True] * 10, base_scenarios=15)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["base_grade"] == line["swap_grade"]
    assert line["shift"]["high"] - line["shift"]["low"] > 2 * GRADE_BAND_WIDTH
    assert (line["verdict"], line["held"]) == (UNCHANGED_WIDE, None)
    assert "admits a move of a full band (5 points)" in swap_verdict_text(line)


def test_without_an_interval_a_moved_grade_moved_and_an_unchanged_one_says_so():
    moved = _model_line(
        1, "M", _rows([True] * 4, base_scenarios=1), _rows([False] * 4, base_scenarios=1), OPTIONS
    )
    assert moved["shift"]["low"] is None
    assert (moved["verdict"], moved["held"]) == (MOVED, False)
    same = _model_line(
        1, "M", _rows([True] * 4, base_scenarios=1), _rows([True] * 4, base_scenarios=1), OPTIONS
    )
    assert (same["verdict"], same["held"]) == (UNCHANGED_NO_INTERVAL, None)
