"""How long a run will take: each configuration's calls at its limits (concurrency and
latency, requests per minute, input and output tokens per minute), the conversations' own
chains of calls, and the pace earlier runs kept (`estimates.run_estimate`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from django.utils.translation import gettext as _

from llm.models import ModelConfiguration

if TYPE_CHECKING:
    from .estimate_history import History
    from .estimate_work import Work
    from .estimates import ConfigurationEstimate, RoleLine

# Without finished runs to learn the pace from: the engine's own time per call (database
# writes, scheduling), measured with the offline model (benchmarks/estimate_accuracy.py:
# 264 calls in 1.0 s on SQLite).
PRIOR_PACE_SECONDS = 0.004


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 42 s, 3.5 min, 2.1 h."""
    if seconds < 90:
        return _("%(n)s s") % {"n": f"{seconds:.0f}" if seconds >= 10 else f"{seconds:.1f}"}
    if seconds < 90 * 60:
        return _("%(n)s min") % {"n": f"{seconds / 60:.1f}"}
    return _("%(n)s h") % {"n": f"{seconds / 3600:.1f}"}


def configuration_wall_seconds(
    configuration: ModelConfiguration,
    *,
    calls: float,
    prompt_tokens: float,
    completion_tokens: float,
    latency_ms: float,
    in_flight: int,
) -> tuple[float, str]:
    """Seconds the configuration's attempts take at its limits, and the limit that sets them
    ("" when it is concurrency over latency)."""
    # Calls in flight at once: the configuration's limit, else as many conversations as the
    # engine drives together (each conversation's calls follow one another).
    concurrency = min(configuration.max_concurrency or in_flight, in_flight)
    per_second = concurrency * 1000.0 / max(latency_ms, 1.0)
    limited_by = ""
    if configuration.requests_per_minute:
        if configuration.requests_per_minute / 60.0 < per_second:
            limited_by = _("%(n)s requests per minute") % {"n": configuration.requests_per_minute}
        per_second = min(per_second, configuration.requests_per_minute / 60.0)
    wall = calls / per_second
    # Token budgets bound the run too: every attempt's tokens pass through the minute's window
    # (cached input counted in full here, as an upper bound where the provider leaves it out).
    for budget, tokens, label in (
        (configuration.input_tokens_per_minute, prompt_tokens, _("%(n)s input tokens per minute")),
        (
            configuration.output_tokens_per_minute,
            completion_tokens,
            _("%(n)s output tokens per minute"),
        ),
    ):
        if budget and tokens / budget * 60.0 > wall:
            wall, limited_by = tokens / budget * 60.0, label % {"n": budget}
    return wall, limited_by


def run_wall_seconds(
    estimates: list[ConfigurationEstimate],
    lines: list[RoleLine],
    work: Work,
    in_flight: int,
    history: History,
) -> tuple[float, str]:
    """The slowest of: the busiest configuration at its limits, the conversations' own chains
    of calls batch after batch, and the pace earlier runs kept (seconds per call)."""
    if not estimates:
        return 0.0, _("nothing to call")
    latency = {e.configuration.pk: e.latency_ms / 1000.0 for e in estimates}
    chain = sum(line.calls * latency[line.configuration.pk] for line in lines) / max(
        1, work.conversations
    )
    limits = max(e.wall_seconds for e in estimates)
    batches = math.ceil(work.conversations / in_flight) if work.conversations else 1
    wall = max(limits, batches * chain)
    basis = _("limits and latencies")
    calls = sum(e.calls for e in estimates)
    if history.pace_seconds is not None:
        paced = history.pace_seconds * calls
        paced_basis = _("pace of %(runs)s earlier runs (%(n)s calls)") % {
            "runs": history.pace_runs,
            "n": history.pace_calls,
        }
    else:
        paced = PRIOR_PACE_SECONDS * calls
        paced_basis = _("prior pace %(ms)s ms a call") % {"ms": PRIOR_PACE_SECONDS * 1000}
    if paced > wall:
        wall, basis = paced, paced_basis
    return wall, basis
