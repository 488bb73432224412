"""Chart labels are whole and tell their rows apart: forest-plot labels wrap onto two lines
instead of being cut, pair labels drop the words every model's name begins with, and an area's
name on the wheel is sized to stay inside its segment."""

import math
import re

import pytest

from results.chart_text import label_lines, shared_prefix, text_width
from results.charts import ForestRow, Node, forest_svg, sunburst
from results.methodology_plots import model_difference_plots
from stats.estimates import Estimate


def _shown_labels(svg: str) -> list[str]:
    """The label column as drawn: each row's lines joined."""
    rows = re.findall(r'<text font-size="12" fill="#212529"><title>.*?</title>(.*?)</text>', svg)
    return [" ".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", row)) for row in rows]


def test_a_label_that_fits_on_two_lines_is_wrapped_not_cut():
    label = "C · Emotional wellbeing support and encouragement"
    assert len(label) > 30
    svg = forest_svg([ForestRow(label, Estimate(value=0.6, low=0.5, high=0.7, n=40))], title="t")
    assert "…" not in svg
    assert _shown_labels(svg) == [label]
    assert all(len(line) <= 30 for line in label_lines(label))


def test_only_a_label_longer_than_two_lines_is_cut():
    label = "A category name so long that two lines of thirty characters cannot hold all of it"
    lines = label_lines(label)
    assert len(lines) == 2
    assert lines[-1].endswith("…")
    svg = forest_svg([ForestRow(label, Estimate(value=0.6, n=40))], title="t")
    assert f"<title>{label}</title>" in svg  # the whole text is still there


def _difference(a: str, b: str, value: float) -> dict:
    return {
        "a": a,
        "b": b,
        "estimate": Estimate(value=value, low=value - 0.1, high=value + 0.1, n=24).as_dict(),
    }


def test_pair_labels_drop_the_shared_start_of_the_names_and_are_distinct():
    names = ["Offline target: agreeable", "Offline target: careful", "Offline target: cautious"]
    pairs = [
        _difference(names[0], names[1], 0.1),
        _difference(names[0], names[2], 0.2),
        _difference(names[1], names[2], 0.05),
    ]
    [plot] = model_difference_plots({"positive": {"differences": pairs}})
    shown = _shown_labels(plot["svg"])
    assert shown == ["agreeable − careful", "agreeable − cautious", "careful − cautious"]
    assert "Offline target" in plot["title"]


@pytest.mark.parametrize(
    ("names", "prefix"),
    [
        (["Offline target: a", "Offline target: b"], "Offline target: "),
        (["GPT-4o", "GPT-4o mini"], ""),  # nothing would be left of the first
        (["Claude", "Gemini"], ""),
        (["Model A"], ""),
    ],
)
def test_shared_prefix_is_whole_words_that_leave_every_name_something(names, prefix):
    assert shared_prefix(names) == prefix


def test_every_area_name_on_the_wheel_stays_inside_its_segment():
    estimate = Estimate(value=0.62, low=0.5, high=0.7, n=30)
    areas = [
        Node(
            name.lower(),
            name,
            estimate,
            children=[
                Node(f"{name}-{i}", f"{name} {i}", estimate, children=[Node("m", "M", estimate)])
                for i in range(count)
            ],
        )
        for name, count in (("Psychological", 5), ("Physical", 4), ("Social", 5))
    ]
    for selected in ("", "Social-2"):
        segments = [s for s in sunburst(areas, selected=selected) if s.ring == 0]
        named = [s for s in segments if s.name]
        assert len(named) >= 2, selected
        for s in named:
            # The ring and the angles from the segment's own path.
            numbers = [float(v) for v in re.findall(r"-?\d+\.\d+", s.path)]
            r1, r0 = numbers[2], numbers[9]
            half = max(text_width(s.name, s.name_size, bold=True), text_width(s.text, 13)) / 2
            for x in (s.text_x - half, s.text_x + half):
                for y in (s.text_y - 0.95 * s.name_size, s.text_y + 1.2 * s.name_size):
                    r = math.hypot(x - 210, y - 210)
                    assert r0 <= r <= r1, (selected, s.name, s.name_size, x, y)
    two_rings = [s for s in sunburst(areas) if s.ring == 0]
    assert [s.name for s in two_rings] == ["Psychological", "Physical", "Social"]
    assert all(s.name_size >= 10 for s in two_rings)
