"""Server-rendered charts: the Explore sunburst and forest plots, computed as SVG geometry.

Pure Python (no Django), so the geometry and the palette are tested directly. Templates draw
the returned shapes; every shape carries its figure as text (a label and a <title>), so colour
is never the only carrier of a value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from django.utils.translation import gettext

from stats.estimates import Estimate

from .chart_text import label_lines, name_placement, polar_point
from .method_words import method_words

# Diverging bands from low (red) through neutral to high (blue-green): ColorBrewer's RdBu red
# half and BrBG teal half. A pure green end would collapse onto the red one for deuteranopes;
# blue-green stays apart from red under red-green colour blindness, and lightness rises towards
# the neutral middle so adjacent bands also differ in lightness (tests simulate both).
PALETTE: tuple[str, ...] = (
    "#b2182b",
    "#d6604d",
    "#f4a582",
    "#fddbc7",
    "#f7f7f7",
    "#b8e3da",
    "#80cdc1",
    "#35978f",
    "#01665e",
)
NO_DATA_FILL = "#d9d9d9"
# Text colour that reads on each band (dark bands get white text).
_DARK = {0, 7, 8}


def band_index(value: float) -> int:
    """Which of the nine equal-width bands a pass rate falls in (0 = lowest)."""
    return min(len(PALETTE) - 1, max(0, int(value * len(PALETTE))))


def band_edges() -> list[tuple[float, float, str]]:
    """(low, high, colour) of each band, for the legend."""
    k = len(PALETTE)
    return [(i / k, (i + 1) / k, PALETTE[i]) for i in range(k)]


def fill_for(estimate: Estimate | None) -> str:
    if estimate is None or not estimate.defined:
        return NO_DATA_FILL
    return PALETTE[band_index(estimate.value)]  # type: ignore[arg-type]


def text_fill_for(estimate: Estimate | None) -> str:
    if estimate is None or not estimate.defined:
        return "#212529"
    return "#ffffff" if band_index(estimate.value) in _DARK else "#212529"  # type: ignore[arg-type]


def pattern_for(estimate: Estimate | None) -> str:
    """A pattern id paired with the colour: hatched below 50 %, crossed without data."""
    if estimate is None or not estimate.defined:
        return "ib-nodata"
    if estimate.value < 0.5:  # type: ignore[operator]
        return "ib-low"
    return ""


def percent(estimate: Estimate | None) -> str:
    if estimate is None or not estimate.defined:
        return "n/a"
    return f"{estimate.value * 100:.0f}%"  # type: ignore[operator]


# --- sunburst ------------------------------------------------------------------------------


@dataclass
class Node:
    """One segment to draw: an area, a subarea or a metric."""

    key: str
    label: str
    estimate: Estimate | None
    href: str = ""
    children: list[Node] = field(default_factory=list)


@dataclass
class Segment:
    key: str
    label: str
    ring: int
    path: str
    fill: str
    text_fill: str
    pattern: str
    text: str
    text_x: float
    text_y: float
    title: str
    href: str
    selected: bool = False
    # Subareas are numbered round the wheel (metrics "n.m"), the key beside it names them.
    number: str = ""
    # An area's name, written on its segment in a size that keeps it inside (`name_placement`).
    name: str = ""
    name_size: int = 14


def arc_path(cx: float, cy: float, r0: float, r1: float, a0: float, a1: float) -> str:
    """SVG path of an annular sector from angle a0 to a1 (radians, clockwise from the top)."""
    if a1 - a0 >= 2 * math.pi - 1e-9:
        a1 = a0 + 2 * math.pi - 1e-4
    large = 1 if a1 - a0 > math.pi else 0
    x0, y0 = polar_point(cx, cy, r1, a0)
    x1, y1 = polar_point(cx, cy, r1, a1)
    x2, y2 = polar_point(cx, cy, r0, a1)
    x3, y3 = polar_point(cx, cy, r0, a0)
    inner = (
        f"L{x2:.2f},{y2:.2f} A{r0:.2f},{r0:.2f} 0 {large} 0 {x3:.2f},{y3:.2f}"
        if r0
        else (f"L{cx:.2f},{cy:.2f}")
    )
    return f"M{x0:.2f},{y0:.2f} A{r1:.2f},{r1:.2f} 0 {large} 1 {x1:.2f},{y1:.2f} {inner} Z"


def _title(node: Node) -> str:
    e = node.estimate
    if e is None or not e.defined:
        return f"{node.label}: not enough data (n = {e.n if e else 0})"
    interval = (
        f" [{e.low * 100:.1f} %, {e.high * 100:.1f} %]" if e.has_interval else " (no interval)"
    )
    return f"{node.label}: {e.value * 100:.1f} %{interval}, n = {e.n}"  # type: ignore[operator]


def sunburst(
    areas: list[Node], *, size: int = 420, selected: str = "", hole: float = 0.18
) -> list[Segment]:
    """Segments of a two- or three-ring wheel: areas inside, subareas outside, and the metrics
    of the selected subarea as a third ring over that subarea's arc.

    Every subarea gets the same angle (the wheel compares subareas, not how many metrics each
    holds); an area spans its subareas.
    """
    cx = cy = size / 2
    leaves = sum(max(1, len(a.children)) for a in areas)
    if not leaves:
        return []
    has_third = any(s.key == selected and s.children for a in areas for s in a.children)
    radius = size / 2 - 2
    r_area = (hole * radius, radius * (0.48 if has_third else 0.58))
    r_sub = (r_area[1], radius * (0.76 if has_third else 1.0))
    r_metric = (r_sub[1], radius)
    step = 2 * math.pi / leaves
    segments: list[Segment] = []
    angle = 0.0

    def add(
        node: Node, ring: int, rr: tuple[float, float], a0: float, a1: float, number: str = ""
    ) -> None:
        mid_r = (rr[0] + rr[1]) / 2
        tx, ty = polar_point(cx, cy, mid_r, (a0 + a1) / 2)
        # Labels only where they fit; the <title>, the key and the table carry every figure.
        fits = (a1 - a0) * mid_r > (44 if ring < 2 else 30)
        text = ""
        if fits:
            text = percent(node.estimate)
        name, name_size = "", 14
        if ring == 0:
            placed = name_placement(
                node.label, percent(node.estimate), centre=cx, rr=rr, a0=a0, a1=a1
            )
            if placed is not None:
                name, (name_size, tx, ty) = node.label, placed
        segments.append(
            Segment(
                key=node.key,
                label=node.label,
                ring=ring,
                path=arc_path(cx, cy, rr[0], rr[1], a0, a1),
                fill=fill_for(node.estimate),
                text_fill=text_fill_for(node.estimate),
                pattern=pattern_for(node.estimate),
                text=text,
                text_x=round(tx, 2),
                text_y=round(ty, 2),
                title=_title(node),
                href=node.href,
                selected=node.key == selected,
                number=number if fits else "",
                name=name,
                name_size=name_size,
            )
        )

    n = 0
    for area in areas:
        span = step * max(1, len(area.children))
        add(area, 0, r_area, angle, angle + span)
        sub_angle = angle
        for sub in area.children:
            n += 1
            add(sub, 1, r_sub, sub_angle, sub_angle + step, str(n))
            if has_third and sub.key == selected:
                m_step = step / len(sub.children)
                for i, metric in enumerate(sub.children):
                    a0 = sub_angle + i * m_step
                    add(metric, 2, r_metric, a0, a0 + m_step, f"{n}.{i + 1}")
            sub_angle += step
        angle += span
    return segments


# --- forest plot ---------------------------------------------------------------------------


@dataclass
class ForestRow:
    label: str
    estimate: Estimate
    href: str = ""
    group: str = ""


def forest_svg(
    rows: list[ForestRow],
    *,
    title: str,
    unit: str = "proportion",
    width: int = 560,
    row_height: int = 22,
    label_width: int = 190,
) -> str:
    """A forest plot (point and interval per row) as an SVG string, escaped throughout.

    Proportions run on 0–100 %; differences on −100..+100 points with a zero line. Rows
    without a defined value show "not enough data" instead of a point.
    """
    lo, hi = (0.0, 1.0) if unit == "proportion" else (-1.0, 1.0)
    if unit not in ("proportion", "difference"):
        values = [
            v
            for r in rows
            for v in (r.estimate.low, r.estimate.high, r.estimate.value)
            if v is not None
        ]
        lo, hi = (min(values + [0.0]), max(values + [1.0]))
    top, bottom = 26, 24
    plot_w = width - label_width - 70
    labels = [label_lines(row.label) for row in rows]
    if any(len(lines) > 1 for lines in labels):
        row_height = max(row_height, 34)  # room for a label on two lines
    height = top + bottom + row_height * max(1, len(rows))

    def x(v: float) -> float:
        return label_width + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    def fmt(v: float) -> str:
        if unit == "score":  # a rubric score, printed as the tables print it
            return f"{v:.2f}"
        return f"{v * 100:+.0f}" if unit == "difference" else f"{v * 100:.0f}%"

    # A picture with links in it is a group, not an image: an image may not hold controls.
    role = "group" if any(row.href for row in rows) else "img"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ib-forest" role="{role}" '
        f'viewBox="0 0 {width} {height}" width="100%" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for tick in (lo, (lo + hi) / 2, hi):
        tx = x(tick)
        out.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - bottom}" '
            f'stroke="#ced4da" stroke-width="1"/>'
            f'<text x="{tx:.1f}" y="{height - 8}" font-size="11" text-anchor="middle" '
            f'fill="#495057">{fmt(tick)}</text>'
        )
    for i, row in enumerate(rows):
        y = top + row_height * i + row_height / 2
        e = row.estimate
        label = escape(row.label)
        lines = labels[i]
        first = y + 4 - 7 * (len(lines) - 1)  # two lines sit either side of the row's middle
        spans = "".join(
            f'<tspan x="4" y="{first + 14 * j:.1f}">{escape(line)}</tspan>'
            for j, line in enumerate(lines)
        )
        text = f'<text font-size="12" fill="#212529"><title>{label}</title>{spans}</text>'
        if row.href:
            text = f'<a href="{escape(row.href)}">{text}</a>'
        out.append(text)
        if not e.defined:
            out.append(
                f'<text x="{label_width}" y="{y + 4:.1f}" font-size="11" fill="#6c757d">'
                f"not enough data (n = {e.n})</text>"
            )
            continue
        if e.has_interval:
            out.append(
                f'<line x1="{x(e.low):.1f}" y1="{y:.1f}" x2="{x(e.high):.1f}" y2="{y:.1f}" '
                f'stroke="#343a40" stroke-width="2"/>'
            )
        fill = PALETTE[band_index(e.value)] if unit == "proportion" else "#0d6efd"
        interval = f" [{fmt(e.low)}, {fmt(e.high)}]" if e.has_interval else " (no interval)"
        out.append(
            f'<circle cx="{x(e.value):.1f}" cy="{y:.1f}" r="5" fill="{fill}" stroke="#212529">'
            f"<title>{label}: {fmt(e.value)}{interval}, n = {e.n}</title></circle>"
            f'<text x="{width - 64}" y="{y + 4:.1f}" font-size="11" fill="#212529">'
            f"{fmt(e.value)} n={e.n}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def interval_methods(rows: list[ForestRow]) -> str:
    """The methods of the rows' intervals, each once, for a chart's caption: a caption names
    the method the figures carry, never one written into the template."""
    methods = dict.fromkeys(
        method_words(row.estimate.method) for row in rows if row.estimate.method
    )
    return "; ".join(methods) or gettext("no interval")
