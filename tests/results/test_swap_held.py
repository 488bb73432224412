"""When a model's grade held under a swap: the shift's interval includes 0, or the grade is
unchanged; undecided only when there is no interval and the grade moved."""

from results.services.swap_study import _model_line

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


def test_a_large_drop_that_moves_the_grade_did_not_hold():
    base = _rows([True] * 30, base_scenarios=15)
    swap = _rows([True] * 3 + [False] * 27, base_scenarios=15)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["shift"]["value"] == -0.9
    assert line["shift"]["high"] < 0
    assert (line["base_grade"], line["swap_grade"]) == ("A+", "F")
    assert line["held"] is False


def test_an_unchanged_grade_held_even_when_the_shift_is_clear():
    base = _rows([True] * 30, base_scenarios=15)
    swap = _rows([True] * 29 + [False], base_scenarios=15)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["base_grade"] == line["swap_grade"] == "A+"
    assert line["held"] is True


def test_a_moved_grade_whose_interval_includes_zero_held():
    base = _rows([True, False] * 15, base_scenarios=15)
    swap = _rows([True, False] * 13 + [False] * 4, base_scenarios=15)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["base_grade"] != line["swap_grade"]
    assert line["shift"]["low"] <= 0 <= line["shift"]["high"]
    assert line["held"] is True


def test_without_an_interval_a_moved_grade_is_undecided():
    base = _rows([True] * 4, base_scenarios=1)
    swap = _rows([False] * 4, base_scenarios=1)
    line = _model_line(1, "M", base, swap, OPTIONS)
    assert line["shift"]["low"] is None
    assert line["held"] is None
