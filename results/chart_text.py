"""Text on the server-rendered charts: how wide a line is, where an area's name fits on the
wheel, and how a forest plot's labels wrap. Pure Python, like `results.charts`, which uses it.
"""

from __future__ import annotations

import itertools
import math


def polar_point(cx: float, cy: float, r: float, angle: float) -> tuple[float, float]:
    # Angle 0 at twelve o'clock, clockwise.
    return cx + r * math.sin(angle), cy - r * math.cos(angle)


# Text is written level, whatever the segment's angle: a name fits when its box (name above, the
# figure below) lies inside the segment. Widths in em of DejaVu Sans and its look-alikes, a
# little generous: the server has no font metrics.
_NARROW, _WIDE = set("fijlrtI.,:;'!|() "), set("mwMW%")
_BOLD = 1.08
_NAME_SIZES = (14, 13, 12, 11, 10)


def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """Estimated width in px of a line of text."""
    ems = sum(
        0.36 if c in _NARROW else 0.98 if c in _WIDE else 0.76 if c.isupper() else 0.64
        for c in text
    )
    return ems * size * (_BOLD if bold else 1.0)


def _inside(
    cx: float, cy: float, rr: tuple[float, float], a0: float, a1: float, x: float, y: float
) -> bool:
    dx, dy = x - cx, y - cy
    if not rr[0] <= math.hypot(dx, dy) <= rr[1]:
        return False
    if a1 - a0 >= 2 * math.pi - 1e-6:
        return True
    angle = math.atan2(dx, -dy) % (2 * math.pi)  # 0 at twelve o'clock, clockwise
    return a0 <= angle <= a1 or a0 <= angle + 2 * math.pi <= a1


def name_placement(
    name: str,
    figure: str,
    *,
    centre: float,
    rr: tuple[float, float],
    a0: float,
    a1: float,
) -> tuple[int, float, float] | None:
    """(font size, x, y) writing ``name`` over ``figure`` inside the ring segment, in the
    largest size that fits anywhere in it; None when no size from 10 px up fits (the key, the
    title and the table still name the area)."""
    shares = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)
    for size in _NAME_SIZES:
        half = max(text_width(name, size, bold=True), text_width(figure, size)) / 2 + 1
        top, bottom = 0.95 * size, 1.2 * size + 2  # from the anchor: name above, figure below
        # The middle of the segment first, then other angles and radii: away from the middle a
        # segment may lie level and hold a longer line.
        for along, out in itertools.product(shares, shares):
            x, y = polar_point(
                centre, centre, rr[0] + out * (rr[1] - rr[0]), a0 + along * (a1 - a0)
            )
            corners = [(px, py) for px in (x - half, x, x + half) for py in (y - top, y + bottom)]
            if all(_inside(centre, centre, rr, a0, a1, px, py) for px, py in corners):
                return size, round(x, 2), round(y, 2)
    return None


# A forest plot's label column holds about this many characters a line (12 px text in 190 px).
LABEL_CHARS = 30


def label_lines(label: str, *, width: int = LABEL_CHARS, most: int = 2) -> list[str]:
    """A label on at most ``most`` lines of ``width`` characters, broken between words; only a
    label longer than that is cut, with "…" (its whole text stays in the row's <title>)."""
    lines: list[str] = []
    words = label.split()
    while words and len(lines) < most:
        line = words.pop(0)
        while words and len(line) + 1 + len(words[0]) <= width:
            line += " " + words.pop(0)
        if len(line) > width:  # one word longer than a line: break it
            words.insert(0, line[width - 1 :])
            line = line[: width - 1] + "-"
        lines.append(line)
    if words:
        last = lines[-1]
        lines[-1] = (last if len(last) < width else last[: width - 1].rstrip()) + "…"
    return lines or [""]


def shared_prefix(names: list[str]) -> str:
    """The words every name begins with ("Offline target: "), when taking them away leaves
    each name something of its own; "" otherwise. Pair labels drop it so pairs can be told
    apart inside the label column."""
    if len(names) < 2:
        return ""
    common = names[0]
    for name in names[1:]:
        while not name.startswith(common):
            common = common[:-1]
    # Back to the end of a whole word (a space after it).
    common = common[: common.rfind(" ") + 1] if " " in common else ""
    if not common or any(not name[len(common) :].strip() for name in names):
        return ""
    return common
