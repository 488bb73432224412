"""Letter grades of pass rates, and how sure a figure is in words.

One wording for every headline figure's uncertainty, the one the label's readings started
with ("plausibly B− to A"): the ends of the figure's 95 % interval, said in the terms the
figure is shown in (grades on the label, percentages elsewhere). The numbers stay beside it
for readers who want them; the words are for everyone else.
"""

from __future__ import annotations

from django.utils.translation import gettext

from stats.estimates import Estimate

# (lower bound in percent, grade), highest first; below the last bound the grade is F.
GRADE_BANDS: tuple[tuple[int, str], ...] = (
    (95, "A+"),
    (90, "A"),
    (85, "A−"),
    (80, "B+"),
    (75, "B"),
    (70, "B−"),
    (65, "C+"),
    (60, "C"),
    (55, "C−"),
    (50, "D+"),
    (45, "D"),
    (40, "D−"),
)
FAIL_GRADE = "F"


def grade_for(rate: float | None) -> str:
    """Letter grade of a pass rate (0..1); "—" when there is no figure."""
    if rate is None:
        return "—"
    points = rate * 100
    for bound, grade in GRADE_BANDS:
        if points >= bound - 1e-9:
            return grade
    return FAIL_GRADE


def grade_table() -> list[tuple[str, str]]:
    """(grade, range) lines for the page's legend."""
    lines = []
    upper = 100
    for bound, grade in GRADE_BANDS:
        lines.append((grade, f"{bound}–{upper} %" if upper == 100 else f"{bound}–<{upper} %"))
        upper = bound
    # Translators: the range of the lowest grade, e.g. "below 40 %".
    lines.append((FAIL_GRADE, gettext("below %(bound)s %%") % {"bound": upper}))
    return lines


def plausibly(low: str, high: str) -> str:
    """The range a figure plausibly lies in, its interval's ends already in words: the one
    phrase every page uses ("plausibly C to B", "plausibly 31 % to 52 %")."""
    return gettext("plausibly %(low)s to %(high)s") % {"low": low, "high": high}


def grade_range(e: Estimate) -> tuple[str, str] | None:
    """The grades of the interval's ends, or None without an interval."""
    if not e.defined or not e.has_interval:
        return None
    return grade_for(e.low), grade_for(e.high)


def grade_words(e: Estimate) -> str:
    """How sure a grade is: "plausibly C to B", or "grade C either way" when the whole
    interval lies in one band; "" without an interval."""
    ends = grade_range(e)
    if ends is None:
        return ""
    if ends[0] == ends[1]:
        return gettext("grade %(grade)s either way") % {"grade": ends[0]}
    return plausibly(*ends)


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f} %"


def percent_words(e: Estimate) -> str:
    """How sure a rate or score is: "plausibly 31 % to 52 %" (whole percents, as the sentences
    around it are written); "too few to say" without a figure, "" without an interval."""
    if not e.defined:
        return gettext("too few to say")
    if not e.has_interval:
        return ""
    low, high = _percent(e.low), _percent(e.high)
    if low == high:
        return gettext("about %(value)s either way") % {"value": low}
    return plausibly(low, high)
