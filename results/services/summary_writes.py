"""Writing a run's pass-rate summary rows: the old rows out, the new ones in, in one transaction.

On PostgreSQL the rows stream to the server by binary COPY: the pooled levels' rows, then the
metric rows (96 % of them) part by part. Every interval is closed-form, so nothing waits on
resampling.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.db import connection
from psycopg import postgres
from psycopg.adapt import Dumper
from psycopg.pq import Format

import stats as statistics
from evaluations.models import EvaluationRun
from results.models import PassRateSummary

from .cells import RunCells
from .copy_records import metric_records
from .languages import language_scopes
from .summaries import (
    SUMMARY_COLUMNS,
    metric_parts,
    metric_rows,
    pooled_rows,
    summary_inputs,
)


def summaries_replace(run: EvaluationRun, cells: RunCells, *, n_resamples: int, seed: int) -> int:
    """Replace the run's summary rows with those of ``cells``; returns their number. Call it
    inside a transaction. (``n_resamples`` and ``seed`` are the refresh's; no summary row
    resamples.)

    The rows over every language come first; when the run's conversations span several
    languages, each language's own rows follow (`languages.language_scopes`), counted and
    bounded on that language's cells alone."""
    scopes = language_scopes(cells)
    PassRateSummary.objects.filter(run=run).delete()
    count = sum(_rows_write(run, scope_cells, language) for language, scope_cells in scopes)
    if connection.vendor == "postgresql":
        # The planner's row counts, now: without them a run's rows just written look like a
        # few dozen, and a page of the API sorts every one of them instead of walking the
        # index.
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {PassRateSummary._meta.db_table}")
    return count


def _rows_write(run: EvaluationRun, cells: RunCells, language: str) -> int:
    """Write the summary rows of ``cells`` under ``language``; returns their number."""
    inputs = summary_inputs(cells)
    pooled = pooled_rows(run, cells, inputs=inputs, language=language)
    if connection.vendor != "postgresql":
        metric = metric_rows(run, cells, inputs=inputs, language=language)
        _insert(pooled + metric)
        return len(pooled) + len(metric)
    # The pooled rows first, so primary keys keep the level-by-level order readers walk
    # (overall, area, subarea, metric); the metric rows' records are built part by part while
    # the server takes in the previous part.
    _copy(pooled, with_ids=False)
    parts = metric_parts(cells, inputs)
    method, failures = statistics.WILSON_EFFECTIVE, inputs.failures
    _copy_data(metric_records(run, parts, method, failures, language=language), SUMMARY_COLUMNS)
    return len(pooled) + sum(part.groups.n.size for part in parts)


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
