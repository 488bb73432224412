"""Writing a run's pass-rate summary rows: the old rows out, the new ones in, in one transaction.

On PostgreSQL the metric rows (closed-form intervals, 96 % of the rows) stream to the server by
binary COPY while the bootstrap intervals of the other levels are drawn on another thread, so
the server's work inserting them overlaps the Python side's drawing. The bootstrap rows follow
with ids reserved before the metric rows were sent, so primary keys keep the level-by-level
order that readers walk (overall, area, subarea, metric).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from django.db import connection
from psycopg import postgres
from psycopg.adapt import Dumper
from psycopg.pq import Format

import stats as statistics
from evaluations.models import EvaluationRun
from results.models import PassRateSummary

from .cells import RunCells
from .copy_records import metric_records
from .summaries import (
    SUMMARY_COLUMNS,
    BootstrapGroups,
    bootstrap_groups,
    metric_parts,
    metric_rows,
    summary_inputs,
)


def summaries_replace(run: EvaluationRun, cells: RunCells, *, n_resamples: int, seed: int) -> int:
    """Replace the run's summary rows with those of ``cells``; returns their number. Call it
    inside a transaction."""
    inputs = summary_inputs(cells)
    groups = bootstrap_groups(cells, inputs)
    postgres = connection.vendor == "postgresql"
    # The resampling runs in compiled code without the GIL; this thread meanwhile builds the
    # metric rows and writes them (the Python parts are not run side by side: they would only
    # take turns with the GIL).
    with ThreadPoolExecutor(max_workers=1) as pool:
        resampling = pool.submit(_intervals, groups, n_resamples, seed)
        if postgres:
            # The old rows out first: the metric rows' records are then built part by part
            # while the server takes in the previous part.
            PassRateSummary.objects.filter(run=run).delete()
            ids = _reserve_ids(_bootstrap_rows_bound(cells))
            parts = metric_parts(cells, inputs)
            n_metric = sum(part.groups.n.size for part in parts)
            method, failures = statistics.WILSON_EFFECTIVE, inputs.failures
            _copy_data(metric_records(run, parts, method, failures), SUMMARY_COLUMNS)
        else:
            metric = metric_rows(run, cells, inputs=inputs)
            n_metric = len(metric)
            PassRateSummary.objects.filter(run=run).delete()
        lows, highs = resampling.result()
    others = groups.rows(run, lows, highs)
    if not postgres:
        _insert(others + metric)
    elif len(others) > len(ids):  # the bound is exact at most; never expected
        raise RuntimeError("more bootstrap summary rows than the bound allows")
    else:
        _copy([(pk, *row) for pk, row in zip(ids, others, strict=False)], with_ids=True)
    return len(others) + n_metric


def _intervals(groups: BootstrapGroups, n_resamples: int, seed: int):
    """The bootstrap levels' intervals (runs beside the metric rows' writing)."""
    return statistics.clustered_mean_intervals(groups.distinct, n_resamples, seed=seed)


def _bootstrap_rows_bound(cells: RunCells) -> int:
    """At most one row per target, polarity and group (overall, each area, each subarea) in
    each of the three age scopes."""
    areas = {a for keys in cells.areas.values() for a in keys}
    subareas = {s for keys in cells.subareas.values() for s in keys}
    targets = set(cells.target.tolist()) | {row[0] for row in cells.failed}
    polarities = set(cells.polarity.values())
    return len(targets) * len(polarities) * (1 + len(areas) + len(subareas)) * 3


def _reserve_ids(count: int) -> list[int]:
    """``count`` ids from the table's identity sequence, increasing, and lower than any a later
    insert takes (gaps are harmless: the sequence promises uniqueness, not density)."""
    if count == 0:
        return []
    table = PassRateSummary._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s) "
            "ORDER BY 1",
            [table, count],
        )
        return [pk for (pk,) in cursor.fetchall()]


def _insert(rows: list[tuple]) -> None:
    """One ``executemany`` INSERT (databases without COPY)."""
    table = PassRateSummary._meta.db_table
    columns = ", ".join(SUMMARY_COLUMNS)
    failures = SUMMARY_COLUMNS.index("failures")
    marks = ", ".join(["%s"] * len(SUMMARY_COLUMNS))
    values = [(*r[:failures], json.dumps(r[failures]), *r[failures + 1 :]) for r in rows]
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)  # noqa: S608


def _copy(rows: list[tuple], *, with_ids: bool) -> None:
    """Binary COPY: numbers travel as their bytes, so Python formats no text, the server parses
    none, and rates and bounds are stored exactly. The COPY protocol is psycopg's own; Django's
    cursor wrapper has no call for it."""
    if not rows:
        return
    names = ("id", *SUMMARY_COLUMNS) if with_ids else SUMMARY_COLUMNS
    statement = (
        f"COPY {PassRateSummary._meta.db_table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"
    )
    # Binary COPY applies no cast: each value goes in as its column's exact type.
    types = [
        PassRateSummary._meta.get_field(name).db_type(connection).partition("(")[0]
        for name in names
    ]
    with connection.cursor() as wrapper:
        cursor = wrapper.cursor
        cursor.adapters.register_dumper(None, _FailuresDumper)
        with cursor.copy(statement) as copy:
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)


def _copy_data(chunks: Iterable[bytes], names: tuple[str, ...]) -> None:
    """COPY of data already in the binary format (header to trailer), each chunk sent as it
    comes."""
    statement = (
        f"COPY {PassRateSummary._meta.db_table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"
    )
    with connection.cursor() as wrapper, wrapper.cursor.copy(statement) as copy:
        for chunk in chunks:
            copy.write(chunk)


class _FailuresDumper(Dumper):
    """``failures`` as binary jsonb (a version byte, then the JSON text). Most rows have none:
    the constant spares a ``json.dumps`` per row, most of the COPY's Python time."""

    format = Format.BINARY
    oid = postgres.types["jsonb"].oid

    def dump(self, obj: dict) -> bytes:
        return b"\x01" + json.dumps(obj).encode() if obj else b"\x01{}"
