"""A run estimate as text, for `run_evaluation --dry-run` and the benchmark."""

from django.utils.translation import gettext as _

from .estimate_time import duration
from .estimates import RunEstimate


def _calls(expected: float, most: int) -> str:
    shown = f"{round(expected):,}"
    # Below the full-length count: early stops; above it: cut-off replies asked again.
    return f"{shown} (≤ {most:,})" if round(expected) < most else shown


def estimate_table(estimate: RunEstimate) -> str:
    """One row per configuration, then one per role: calls, tokens, cost, wall time and what
    each figure rests on."""
    header = (
        _("configuration"),
        _("roles"),
        _("calls"),
        _("input tok"),
        _("output tok"),
        _("cost"),
        _("wall time"),
        _("based on"),
    )
    rows = [header]
    for item in estimate.configurations:
        rows.append(
            (
                item.configuration.name,
                ", ".join(item.roles),
                _calls(item.calls, item.max_calls),
                f"{item.prompt_tokens:,}",
                f"{item.completion_tokens:,}",
                _("price unknown") if item.cost is None else f"${item.cost:.4f}",
                duration(item.wall_seconds),
                f"{item.token_basis}; {item.latency_basis}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
    ]
    lines.append("  " + _("per role:"))
    for line in estimate.lines:
        basis = _("history, %(n)s calls") % {"n": line.token_n} if line.token_n else _("prior")
        stops = (
            _("; early stops from %(n)s conversations") % {"n": line.calls_n}
            if line.calls_n
            else ""
        )
        lines.append(
            f"    {line.role} ({line.configuration.name}): "
            f"{_calls(line.calls, line.max_calls)} calls, "
            f"{round(line.prompt_tokens):,} + {round(line.completion_tokens):,} tokens "
            f"({basis}{stops})"
        )
    return "\n".join(lines)
