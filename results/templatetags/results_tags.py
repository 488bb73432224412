"""Formatting of rates and intervals: one place, so every page prints them the same way."""

from django import template

register = template.Library()


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.6875 -> "68.8 %"; None (undefined) -> "—"."""
    if value is None:
        return "—"
    return f"{float(value) * 100:.{int(digits)}f} %"


@register.filter
def num(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{float(value):.{int(digits)}f}"


@register.simple_tag
def interval(low, high, percent: bool = True) -> str:
    """ "[64.1 %, 71.0 %]", or "no interval" when it could not be drawn."""
    if low is None or high is None:
        return "no interval"
    if percent:
        return f"[{float(low) * 100:.1f} %, {float(high) * 100:.1f} %]"
    return f"[{float(low):.3f}, {float(high):.3f}]"


@register.filter
def pp(value, digits: int = 1) -> str:
    """A difference of two rates in percentage points: 0.052 -> "+5.2 pp"; None -> "—"."""
    if value is None:
        return "—"
    return f"{float(value) * 100:+.{int(digits)}f} pp"


@register.simple_tag
def pp_interval(low, high) -> str:
    """ "[−3.1, +8.0] pp", or "no interval" when it could not be drawn."""
    if low is None or high is None:
        return "no interval"
    return f"[{float(low) * 100:+.1f}, {float(high) * 100:+.1f}] pp"
