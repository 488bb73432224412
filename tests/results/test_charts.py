"""Chart geometry and palette: colour-blind safety checked by simulation, wheel segments."""

import math

import numpy as np
import pytest

from results.charts import (
    PALETTE,
    ForestRow,
    Node,
    arc_path,
    band_index,
    fill_for,
    forest_svg,
    pattern_for,
    sunburst,
)
from stats.estimates import Estimate

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB.
MACHADO = {
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
}


def _linear(hex_colour: str) -> np.ndarray:
    srgb = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ np.clip(linear, 0, 1) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _delta_e(a: str, b: str, matrix=None) -> float:
    la, lb = _linear(a), _linear(b)
    if matrix is not None:
        la, lb = matrix @ la, matrix @ lb
    return float(np.linalg.norm(_lab(la) - _lab(lb)))


def test_lab_conversion_matches_known_values():
    assert _lab(_linear("#ffffff")) == pytest.approx([100, 0, 0], abs=0.1)
    # sRGB red is L*a*b* (53.2, 80.1, 67.2).
    assert _lab(_linear("#ff0000")) == pytest.approx([53.24, 80.09, 67.20], abs=0.2)


@pytest.mark.parametrize("vision", [None, "protanopia", "deuteranopia"])
def test_adjacent_bands_stay_distinguishable(vision):
    """Neighbouring bands differ by ΔE*ab ≥ 8 (well above the ~2.3 just-noticeable difference)
    for typical vision and under simulated protanopia and deuteranopia."""
    matrix = MACHADO.get(vision) if vision else None
    for a, b in zip(PALETTE, PALETTE[1:], strict=False):
        assert _delta_e(a, b, matrix) >= 8, (vision, a, b)


@pytest.mark.parametrize("vision", ["protanopia", "deuteranopia"])
def test_low_and_high_do_not_collapse_under_colour_blindness(vision):
    """A red band and its mirror on the high side (e.g. 10 % vs 90 %) stay far apart."""
    k = len(PALETTE)
    for i in range(k // 2):
        assert _delta_e(PALETTE[i], PALETTE[k - 1 - i], MACHADO[vision]) >= 10, i


def test_bands_cover_zero_to_one():
    assert band_index(0.0) == 0
    assert band_index(1.0) == len(PALETTE) - 1
    assert band_index(0.5) == len(PALETTE) // 2
    assert [band_index(i / 100) for i in range(101)] == sorted(
        band_index(i / 100) for i in range(101)
    )


def test_colour_is_paired_with_a_pattern_and_missing_data_is_marked():
    assert pattern_for(Estimate(value=0.3, n=10)) == "ib-low"
    assert pattern_for(Estimate(value=0.8, n=10)) == ""
    assert pattern_for(Estimate.insufficient(n=1)) == "ib-nodata"
    assert fill_for(None) != fill_for(Estimate(value=0.5, n=4))


def test_wheel_gives_each_subarea_an_equal_arc_and_areas_span_their_subareas():
    def e(v):
        return Estimate(value=v, low=v - 0.1, high=v + 0.1, n=12)

    areas = [
        Node("a", "A", e(0.5), children=[Node("a1", "A1", e(0.2)), Node("a2", "A2", e(0.9))]),
        Node("b", "B", e(0.7), children=[Node("b1", "B1", e(0.7))]),
    ]
    segments = sunburst(areas)
    assert [s.key for s in segments] == ["a", "a1", "a2", "b", "b1"]
    assert all(s.text for s in segments)
    assert segments[1].title == "A1: 20.0 % [10.0 %, 30.0 %], n = 12"
    # Area A spans two of three leaves: its arc ends at 240°, where B starts.
    end = segments[0].path.split(" A")[1].split()[4]  # the outer arc's end point
    x, y = (float(v) for v in end.split(","))
    assert math.degrees(math.atan2(x - 210, 210 - y)) % 360 == pytest.approx(240, abs=0.5)


def test_selected_subarea_grows_a_metric_ring():
    metrics = [Node(f"m{i}", f"M{i}", Estimate(value=0.5, n=6)) for i in range(4)]
    areas = [Node("a", "A", None, children=[Node("a1", "A1", None, children=metrics)])]
    assert [s.ring for s in sunburst(areas)] == [0, 1]
    rings = [s.ring for s in sunburst(areas, selected="a1")]
    assert rings == [0, 1, 2, 2, 2, 2]


def test_arc_path_is_closed_and_full_circles_do_not_degenerate():
    path = arc_path(100, 100, 20, 50, 0, 2 * math.pi)
    assert path.startswith("M")
    assert path.endswith("Z")
    assert " 0 1 1 " in path  # large-arc flag set for more than half a turn


def test_forest_plot_draws_points_intervals_and_escapes_labels():
    svg = forest_svg(
        [
            ForestRow("<Model> A", Estimate(value=0.6, low=0.5, high=0.7, n=40)),
            ForestRow("B", Estimate.insufficient(n=1)),
        ],
        title="Pass rates",
    )
    assert "&lt;Model&gt; A" in svg
    assert "<Model>" not in svg
    assert svg.count("<circle") == 1
    assert "not enough data (n = 1)" in svg
    assert "60% [50%, 70%], n = 40" in svg
