"""Figures computed by the results refresh and stored (`RunFigures`), so that a public page on
an empty page cache reads them (one indexed query) instead of drawing bootstraps.

A kind of figures (`FigureKind`) says how to read its inputs and name them (``source``, a
fingerprint cheap enough to take on every request), how to compute the figures from those
inputs, and how to write them as JSON and read them back exactly. The refresh computes every
kind (`run_figures_compute`) and stores it with the analysis it writes (`run_figures_write`,
marked with that refresh's time); a reader asks `run_figures` and gets the stored figures
when their source is the current one, else the figures computed live from the current inputs:
slower, never stale. Requests never write: the refresh owns the rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import F
from django.utils import timezone

from evaluations.models import EvaluationRun

from ..models import RunFigures

T = TypeVar("T")


@dataclass(frozen=True)
class FigureKind(Generic[T]):
    """One kind of stored figures of a run."""

    name: str
    # (source, inputs): the inputs the figures are computed from, and a text naming them.
    inputs: Callable[[EvaluationRun], tuple[str, Any]]
    compute: Callable[[EvaluationRun, Any], T]
    encode: Callable[[T], Any]
    decode: Callable[[Any], T]


def run_figures(kind: FigureKind[T], run: EvaluationRun) -> T:
    """The run's figures of this kind: stored when computed from today's inputs, else live."""
    source, inputs = kind.inputs(run)
    stored = (
        RunFigures.objects.filter(run_id=run.pk, kind=kind.name, source=source)
        # Written by the run's latest refresh: figures of an earlier one are not read even
        # when their inputs look alike (the refresh rereads the judge's verdicts).
        .filter(refreshed_at=F("run__analysis__computed_at"))
        .values_list("figures", flat=True)
        .first()
    )
    if stored is not None:
        return kind.decode(stored)
    return kind.compute(run, inputs)


def run_figures_compute(kind: FigureKind[T], run: EvaluationRun) -> tuple[str, Any]:
    """(source, encoded figures) of the run, for `run_figures_write`: the slow part, run
    before the refresh opens its transaction."""
    source, inputs = kind.inputs(run)
    # Through JSON text here, so what is stored is what a reader gets back (NumPy's numbers
    # become Python's).
    return source, json.loads(json.dumps(kind.encode(kind.compute(run, inputs)), default=_number))


def _number(value: Any) -> Any:
    if hasattr(value, "item"):  # a NumPy scalar
        return value.item()
    raise TypeError(f"Not storable as JSON: {type(value).__name__}")


def run_figures_write(
    kind: FigureKind[Any],
    run: EvaluationRun,
    computed: tuple[str, Any],
    *,
    refreshed_at: datetime,
) -> RunFigures:
    """Store figures from `run_figures_compute`, replacing the run's previous ones; call it in
    the refresh's transaction with the `RunAnalysis.computed_at` it writes."""
    source, figures = computed
    row, _ = RunFigures.objects.update_or_create(
        run=run,
        kind=kind.name,
        defaults={
            "source": source,
            "figures": figures,
            "refreshed_at": refreshed_at,
            "computed_at": timezone.now(),
        },
    )
    return row
