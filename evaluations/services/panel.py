"""A run's panel of judges: who sits on it, which readings are whose, and the panel verdict.

The run's own judge is the first seat; `RunJudge` rows add the others. Judgments are numbered
across the panel (the first seat's repetitions, then the next seat's), so a reading's seat
follows from its repetition alone. Each judge's verdict is the majority of its own readings
(an odd number, so never tied); the conversation's verdict is the majority of the judges'
verdicts. An even panel can split evenly: that is reported as a tie and never broken, since
breaking it toward pass or fail would bias the published rate. The rule itself is
`stats.panel.panel_verdicts`, the one the published figures use; this module only lays a run's
readings out by seat for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration
from stats.panel import panel_verdicts

from ..models import EvaluationRun, RunJudge

_CACHE = "_panel_seats"


@dataclass(frozen=True)
class Seat:
    """One judge of the panel and the range of judgment repetitions that are its readings."""

    index: int
    judge: ModelConfiguration
    repetitions: int
    first: int  # its first reading's repetition number

    @property
    def numbers(self) -> range:
        return range(self.first, self.first + self.repetitions)


def _seats(run: EvaluationRun, further: Iterable[RunJudge]) -> list[Seat]:
    seats = [Seat(0, run.judge, run.judgments_per_conversation, 0)]
    for row in sorted(further, key=lambda r: r.position):
        last = seats[-1]
        seats.append(Seat(len(seats), row.judge, row.repetitions, last.first + last.repetitions))
    return seats


def run_panel(run: EvaluationRun) -> list[Seat]:
    """The run's judges in panel order (one seat for a single-judge run), read once per run
    object: the engine reads it in its database thread (`runs_panel_load`) before any step."""
    seats = getattr(run, _CACHE, None)
    if seats is None:
        seats = _seats(run, run.panel_judges.select_related("judge"))
        setattr(run, _CACHE, seats)
    return seats


def runs_panel_load(runs: Iterable[EvaluationRun]) -> None:
    """Read the panels of many run objects in one query (those not read yet)."""
    pending = [run for run in runs if getattr(run, _CACHE, None) is None]
    if not pending:
        return
    further: dict[int, list[RunJudge]] = {}
    for row in RunJudge.objects.filter(run_id__in={r.pk for r in pending}).select_related("judge"):
        further.setdefault(row.run_id, []).append(row)
    for run in pending:
        setattr(run, _CACHE, _seats(run, further.get(run.pk, [])))


def panel_readings_required(run: EvaluationRun) -> int:
    """Judgments a conversation needs before its verdict: every seat's repetitions."""
    return sum(seat.repetitions for seat in run_panel(run))


def seat_of(seats: list[Seat], repetition: int) -> Seat | None:
    return next((s for s in seats if repetition in s.numbers), None)


@dataclass(frozen=True)
class PanelVerdict:
    present: bool | None  # None on a tie
    tie: bool
    judges: list[bool | None]  # each judge's own verdict (present), in seat order


def _seat_readings(seats: list[Seat], readings: list[dict[int, bool]]) -> np.ndarray:
    """``readings[c]`` (present by repetition number) as ``stats.panel``'s
    conversations x judges x repetitions array, ``nan`` past a seat's own repetitions."""
    arr = np.full((len(readings), len(seats), max(s.repetitions for s in seats)), np.nan)
    for c, by_repetition in enumerate(readings):
        for seat in seats:
            votes = [by_repetition[r] for r in seat.numbers if r in by_repetition]
            if len(votes) < seat.repetitions:
                raise ApplicationError(
                    ngettext(
                        "Judge %(judge)s has %(count)s of its %(repetitions)s reading.",
                        "Judge %(judge)s has %(count)s of its %(repetitions)s readings.",
                        seat.repetitions,
                    )
                    % {"judge": seat.judge, "count": len(votes), "repetitions": seat.repetitions}
                )
            arr[c, seat.index, : len(votes)] = votes
    return arr


def _present(value: float) -> bool | None:
    return None if np.isnan(value) else bool(value)


def panel_verdicts_of(seats: list[Seat], readings: list[dict[int, bool]]) -> list[PanelVerdict]:
    """The panel verdict of each conversation (``readings[c]``: present by repetition number),
    by `stats.panel.panel_verdicts` in one call: the majority over judges of each judge's
    majority over its readings; an even split of the judges is a tie (``present`` None)."""
    if not readings:
        return []
    panel = panel_verdicts(_seat_readings(seats, readings))
    return [
        PanelVerdict(
            present=_present(panel.verdict[c]),
            tie=bool(panel.tie[c]),
            judges=[_present(v) for v in panel.judge_verdict[c]],
        )
        for c in range(len(readings))
    ]


def panel_verdict(seats: list[Seat], readings: dict[int, bool]) -> PanelVerdict:
    """`panel_verdicts_of` for one conversation."""
    return panel_verdicts_of(seats, [readings])[0]


def panel_configure(
    run: EvaluationRun, judges: list[tuple[ModelConfiguration, int]]
) -> list[RunJudge]:
    """Seat further judges (configuration, repetitions) after the run's own judge.

    Refuses a configuration seated twice (its readings would be indistinguishable), an even
    number of repetitions (a judge's own majority must decide) and switched-off ones.
    """
    names = [run.judge.name, *(c.name for c, _ in judges)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ApplicationError(
            _("A judge sits on the panel once; %(items)s is named twice.")
            % {"items": ", ".join(repeated)}
        )
    for configuration, repetitions in judges:
        if repetitions < 1 or repetitions % 2 == 0:
            raise ApplicationError(
                _(
                    "Give %(configuration_name)s an odd number of readings (1, 3, "
                    "5…) so its own majority decides."
                )
                % {"configuration_name": configuration.name}
            )
        if not configuration.is_active:
            raise ApplicationError(
                _("%(configuration_name)s is switched off.")
                % {"configuration_name": configuration.name}
            )
    rows = RunJudge.objects.bulk_create(
        RunJudge(run=run, position=i, judge=configuration, repetitions=repetitions)
        for i, (configuration, repetitions) in enumerate(judges, start=1)
    )
    if hasattr(run, _CACHE):
        delattr(run, _CACHE)
    return rows


@dataclass(frozen=True)
class JudgeReadings:
    """One judge's readings of a conversation and its own verdict (None until all are in)."""

    seat: Seat
    readings: list  # its Judgment rows, in order
    present: bool | None

    @property
    def name(self) -> str:
        return self.seat.judge.name

    @property
    def is_offline(self) -> bool:
        return self.seat.judge.is_offline or any(j.is_offline for j in self.readings)


def conversation_panel(run: EvaluationRun, judgments: Iterable) -> list[JudgeReadings] | None:
    """A conversation's readings grouped by judge, for a run with a panel (None for one judge,
    whose readings are shown as they always were)."""
    seats = run_panel(run)
    if len(seats) < 2:
        return None
    by_seat: dict[int, list] = {seat.index: [] for seat in seats}
    for judgment in judgments:
        seat = seat_of(seats, judgment.repetition)
        if seat is not None:
            by_seat[seat.index].append(judgment)
    out = []
    for seat in seats:
        readings = sorted(by_seat[seat.index], key=lambda j: j.repetition)
        present = None
        if len(readings) == seat.repetitions:
            own = panel_verdict(
                [Seat(0, seat.judge, seat.repetitions, seat.first)],
                {j.repetition: j.present for j in readings},
            )
            present = own.present
        out.append(JudgeReadings(seat, readings, present))
    return out
