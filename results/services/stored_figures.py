"""Figures computed by the results refresh and stored (`RunFigures`), so that a public page on
an empty page cache reads the part it shows (one indexed query) instead of drawing bootstraps.

A kind of figures (`FigureKind`) says how to read its inputs and name them (``source``, a
stamp cheap enough to take on every request) and how to compute its documents from them: one
JSON document per part a page reads (a metric's, a model's), and the run-wide part ``""``,
always present. The refresh computes every kind (`run_figures_compute`) and stores its parts
with the analysis it writes (`run_figures_write`, marked with that refresh's time). A reader
asks `run_figures` for one part: stored when written from today's inputs by the run's latest
refresh, else computed live from the current inputs (slower, never stale). Requests never
write: the refresh owns the rows. Ratings that feed a kind set the run's stored figures aside
in their own transaction (`run_figures_discard`), where a stamp would cost a scan of the run's
ratings on every request.

A kind may also say how to refresh itself from cells (``refresh``, `figure_cells`): the refresh
then rebuilds only the parts holding a cell whose inputs changed and keeps the others as stored
(set aside or not: they are marked written by this refresh).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import F
from django.utils import timezone

from evaluations.models import EvaluationRun

from ..models import RunFigures
from .figure_cells import CellStore

RUN_PART = ""  # the run-wide document, written for every refresh: its presence dates the rest

Documents = dict[str, Any]


@dataclass(frozen=True)
class FigureKind:
    """One kind of stored figures of a run."""

    name: str
    # (source, inputs): the inputs the figures are computed from, and a text naming them.
    inputs: Callable[[EvaluationRun], tuple[str, Any]]
    # The documents by part, RUN_PART among them.
    compute: Callable[[EvaluationRun, Any], Documents]
    # For the refresh, from the kind's cells (`figure_cells`): given the parts stored now,
    # the documents of the parts to write and the stored parts to keep as they are. Without
    # it the refresh computes every document.
    refresh: (
        Callable[[EvaluationRun, Any, CellStore, set[str]], tuple[Documents, set[str]]] | None
    ) = None


@dataclass(frozen=True)
class Computed:
    """What a refresh writes of one kind: the documents of the parts that changed, the stored
    parts kept, and the cells the documents were assembled from."""

    source: str
    documents: Documents
    kept: frozenset[str] = frozenset()
    cells: CellStore | None = None


def run_figures(kind: FigureKind, run: EvaluationRun, part: str = RUN_PART) -> Any:
    """One document of the run's figures of this kind (None: the figures have no such part):
    stored when written from today's inputs by the run's latest refresh, else live."""
    return run_figure_parts(kind, run, (part,))[part]


def run_figure_parts(kind: FigureKind, run: EvaluationRun, parts: Iterable[str]) -> dict[str, Any]:
    """Several documents of the run's figures of this kind in one read, by part (None: no
    such part); as :func:`run_figures` gives each."""
    wanted = set(parts)
    source, inputs = kind.inputs(run)
    stored = dict(
        RunFigures.objects.filter(
            run_id=run.pk, kind=kind.name, source=source, part__in=wanted | {RUN_PART}
        )
        # Written by the run's latest refresh: figures of an earlier one are not read even
        # when their inputs look alike (the refresh rereads the judge's verdicts).
        .filter(refreshed_at=F("run__analysis__computed_at"))
        .values_list("part", "figures")
    )
    if RUN_PART not in stored:
        stored = _plain(kind.compute(run, inputs))
    return {part: stored.get(part) for part in wanted}


# The refresh time of stored figures whose inputs changed: no analysis has it, so no page
# reads them, while the next refresh still finds the parts it can keep (`FigureKind.refresh`).
DISCARDED = datetime(1970, 1, 1, tzinfo=UTC)


def run_figures_discard(run_ids: list[int]) -> int:
    """Set the runs' stored figures aside (their inputs changed): pages compute them live until
    the refresh the change books has stored them again. Returns the rows set aside."""
    return RunFigures.objects.filter(run_id__in=run_ids).update(refreshed_at=DISCARDED)


def run_figures_compute(kind: FigureKind, run: EvaluationRun) -> Computed:
    """The documents of the run that changed, for `run_figures_write`: the slow part, run
    before the refresh opens its transaction."""
    source, inputs = kind.inputs(run)
    if kind.refresh is None:
        return Computed(source, _plain(kind.compute(run, inputs)))
    cells = CellStore(run, kind.name)
    stored = set(RunFigures.objects.filter(run=run, kind=kind.name).values_list("part", flat=True))
    documents, kept = kind.refresh(run, inputs, cells, stored)
    return Computed(source, _plain(documents), frozenset(kept), cells)


def run_figures_write(
    kind: FigureKind,
    run: EvaluationRun,
    computed: Computed,
    *,
    refreshed_at: datetime,
) -> int:
    """Store documents from `run_figures_compute` in place of the run's previous ones (the
    kept parts marked as written by this refresh); call it in the refresh's transaction with
    the `RunAnalysis.computed_at` it writes. Returns how many parts were written."""
    source, documents = computed.source, computed.documents
    previous = RunFigures.objects.filter(run=run, kind=kind.name)
    previous.exclude(part__in=computed.kept).delete()
    if computed.kept:
        previous.filter(part__in=computed.kept).update(source=source, refreshed_at=refreshed_at)
    if computed.cells is not None:
        computed.cells.write()
    now = timezone.now()
    if connection.vendor == "postgresql":
        # A release's judge trust is ~800 parts, ~5 MB of JSON: a bulk INSERT binds them as
        # one array per column, which the driver escapes in Python twice over (1.5 s at full
        # scale); COPY sends each document's text as it is.
        _copy(
            (run.pk, kind.name, part, source, refreshed_at, now, json.dumps(document))
            for part, document in documents.items()
        )
        return len(documents)
    rows = RunFigures.objects.bulk_create(
        RunFigures(
            run=run,
            kind=kind.name,
            part=part,
            source=source,
            figures=document,
            refreshed_at=refreshed_at,
            computed_at=now,
        )
        for part, document in documents.items()
    )
    return len(rows)


_COLUMNS = ("run_id", "kind", "part", "source", "refreshed_at", "computed_at", "figures")


def _copy(rows: Iterable[tuple]) -> None:
    statement = f"COPY {RunFigures._meta.db_table} ({', '.join(_COLUMNS)}) FROM STDIN"
    with connection.cursor() as wrapper, wrapper.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def _plain(documents: Documents) -> Documents:
    # Through JSON text, so a live answer is what a stored one reads back (NumPy's numbers
    # become Python's, tuples lists).
    return json.loads(json.dumps(documents, default=_number))


def _number(value: Any) -> Any:
    if hasattr(value, "item"):  # a NumPy scalar
        return value.item()
    raise TypeError(f"Not storable as JSON: {type(value).__name__}")
