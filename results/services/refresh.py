"""Rebuild what the public pages show about one run.

Two products, each replaced as a whole in its own transaction, so readers see either the old or
the new figures, never a mix:

* the pass-rate summaries (`summaries_refresh`): counts and intervals of every cell, the rows
  every results page reads;
* the run analysis (`analysis_refresh`): reliability and robustness, the `RunAnalysis` snapshot.

A finished run needs both (`results_refresh`, one transaction); ratings arriving change only
the analysis. The slow parts run before a transaction opens.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from psycopg import postgres
from psycopg.adapt import Dumper
from psycopg.pq import Format

from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion
from results.models import PassRateSummary, RunAnalysis

from .cells import RunCells, run_cells
from .evidence import evidence_verification
from .reliability import anchor_consistency, expert_agreement, expert_verdict_rows
from .repeatability import judge_repeatability, judgment_counts
from .robustness import robustness
from .summaries import DEFAULT_RESAMPLES, SUMMARY_COLUMNS, failed_as_fail, summary_rows


def summaries_refresh(
    *,
    run: EvaluationRun,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    timings: dict[str, float] | None = None,
) -> int:
    """Recompute the run's pass-rate summaries (counts and intervals of every cell); returns
    the number of rows. ``timings``, if given, receives the seconds spent counting (the cell
    GROUP BY), on the intervals and writing."""
    clock = _Clock(timings)
    cells = run_cells(run)
    clock.lap("counting")
    rows = summary_rows(run, cells, n_resamples=n_resamples, seed=seed)
    clock.lap("intervals")
    with transaction.atomic():
        _summaries_write(run, rows)
    clock.lap("writes")
    return len(rows)


def analysis_refresh(
    *,
    run: EvaluationRun,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    timings: dict[str, float] | None = None,
) -> RunAnalysis:
    """Recompute the run's reliability and robustness snapshot (`RunAnalysis`)."""
    started = time.perf_counter()
    clock = _Clock(timings)
    cells = run_cells(run)
    clock.lap("counting")
    figures = _analysis(run, cells, n_resamples=n_resamples, seed=seed)
    clock.lap("reliability and robustness")
    with transaction.atomic():
        analysis = _analysis_write(run, figures, n_resamples, time.perf_counter() - started)
    clock.lap("writes")
    return analysis


def results_refresh(
    *,
    run: EvaluationRun,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    timings: dict[str, float] | None = None,
) -> RunAnalysis:
    """Both products of a finished run from one reading of its cells, in one transaction.

    Idempotent: the computation reads only stored rows, and the old rows are replaced.
    ``timings`` receives counting, intervals, reliability and robustness, and writes.
    """
    started = time.perf_counter()
    clock = _Clock(timings)
    cells = run_cells(run)
    clock.lap("counting")
    rows = summary_rows(run, cells, n_resamples=n_resamples, seed=seed)
    clock.lap("intervals")
    figures = _analysis(run, cells, n_resamples=n_resamples, seed=seed)
    clock.lap("reliability and robustness")
    with transaction.atomic():
        _summaries_write(run, rows)
        analysis = _analysis_write(run, figures, n_resamples, time.perf_counter() - started)
    clock.lap("writes")
    return analysis


def _analysis(run: EvaluationRun, cells: RunCells, *, n_resamples: int, seed: int) -> dict:
    names = dict(
        ModelConfiguration.objects.filter(pk__in=set(cells.target.tolist())).values_list(
            "pk", "name"
        )
    )
    keys = dict(
        MetricVersion.objects.filter(pk__in=set(cells.version.tolist())).values_list(
            "pk", "metric__key"
        )
    )
    options = {"n_resamples": n_resamples, "seed": seed}
    # Robustness reads only the cells (no query), so it runs beside the judgment GROUP BY and
    # the reliability figures: NumPy and the database driver release the GIL. Every figure
    # draws from its own generator, so the figures do not depend on which thread computes them.
    with ThreadPoolExecutor(max_workers=1) as pool:
        robust_job = pool.submit(_robustness, cells, names, keys, options)
        verdict_rows = expert_verdict_rows(run)
        counts = judgment_counts(run)
        reliability = {
            "judge": judge_repeatability(run, counts=counts, metric_keys=keys, **options),
            # The validity figure: blind ratings only. Judge-visible ratings measure endorsement.
            "experts": expert_agreement(run, verdict_rows["blind"], **options),
            "endorsement": expert_agreement(run, verdict_rows["judge_visible"], **options),
            "anchors": anchor_consistency(run, **options),
            "evidence": evidence_verification(run, counts=counts, **options),
        }
        robust = robust_job.result()
    return {"reliability": reliability, "robustness": robust}


def _robustness(
    cells: RunCells, names: dict[int, str], keys: dict[int, str], options: dict[str, int]
) -> dict[str, Any]:
    robust = robustness(cells, names, keys, **options)
    robust["failed_as_fail"] = failed_as_fail(cells, names, **options)
    return robust


def _analysis_write(
    run: EvaluationRun, figures: dict[str, Any], n_resamples: int, seconds: float
) -> RunAnalysis:
    analysis, _ = RunAnalysis.objects.update_or_create(
        run=run,
        defaults={
            "computed_at": timezone.now(),
            "n_resamples": n_resamples,
            "seconds": seconds,
            **figures,
        },
    )
    return analysis


class _Clock:
    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings, self.last = timings, time.perf_counter()

    def lap(self, part: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[part] = self.timings.get(part, 0.0) + now - self.last
        self.last = now


def _summaries_write(run: EvaluationRun, rows: list[tuple]) -> None:
    PassRateSummary.objects.filter(run=run).delete()
    _insert_summaries(rows)


def _insert_summaries(rows: list[tuple]) -> None:
    """Insert the summary rows in one statement, without building model instances: COPY on
    PostgreSQL, one ``executemany`` INSERT elsewhere."""
    table = PassRateSummary._meta.db_table
    columns = ", ".join(SUMMARY_COLUMNS)
    failures = SUMMARY_COLUMNS.index("failures")
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            _copy_summaries(
                cursor.cursor, f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)", rows
            )
        else:
            marks = ", ".join(["%s"] * len(SUMMARY_COLUMNS))
            values = [(*r[:failures], json.dumps(r[failures]), *r[failures + 1 :]) for r in rows]
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)  # noqa: S608


def _copy_summaries(cursor, statement: str, rows: list[tuple]) -> None:
    """Binary COPY: numbers travel as their bytes, so Python formats no text, the server parses
    none, and rates and bounds are stored exactly. The COPY protocol is psycopg's own; Django's
    cursor wrapper has no call for it."""
    cursor.adapters.register_dumper(None, _FailuresDumper)
    # Binary COPY applies no cast: each value goes in as its column's exact type.
    types = [
        PassRateSummary._meta.get_field(name).db_type(connection).partition("(")[0]
        for name in SUMMARY_COLUMNS
    ]
    with cursor.copy(statement) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


class _FailuresDumper(Dumper):
    """``failures`` as binary jsonb (a version byte, then the JSON text). Most rows have none:
    the constant spares a ``json.dumps`` per row, most of the COPY's Python time."""

    format = Format.BINARY
    oid = postgres.types["jsonb"].oid

    def dump(self, obj: dict) -> bytes:
        return b"\x01" + json.dumps(obj).encode() if obj else b"\x01{}"
