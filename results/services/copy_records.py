"""PostgreSQL binary COPY data for the metric summary rows, built column by column in NumPy.

A run has tens of thousands of metric rows and nearly all of them share one layout (no failed
conversations, finite bounds): those records are one structured array, big-endian as the COPY
format wants, with no Python object per row or per value. The few others are encoded one by
one. The bytes are what psycopg's ``write_row`` would send for the same rows.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator

import numpy as np
from django.db import connection

from evaluations.models import EvaluationRun
from results.models import PassRateSummary, SummaryLevel

from .summaries import POLARITIES, SUMMARY_COLUMNS, GroupKey, MetricPart

HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
_NUMBERS = {"bigint": ">i8", "integer": ">i4", "double precision": ">f8"}
_PACK = {"bigint": ">q", "integer": ">i", "double precision": ">d"}
_NULL = -1


def column_kinds() -> list[str]:
    """Each summary column's database type, as COPY encodes it."""
    kinds = []
    for name in SUMMARY_COLUMNS:
        kind = PassRateSummary._meta.get_field(name).db_type(connection).partition("(")[0]
        if kind not in _NUMBERS and kind not in ("varchar", "jsonb"):
            raise TypeError(f"no binary COPY encoding for {name} ({kind})")
        kinds.append(kind)
    return kinds


def metric_records(
    run: EvaluationRun,
    parts: Iterable[MetricPart],
    method: str,
    failures: dict[GroupKey, dict[str, int]],
    *,
    language: str = "",
) -> Iterator[bytes]:
    """The COPY data of the metric rows, in `metric_rows` order: the header, then each part's
    records as it is built (the server can take in one part while the next is built), then the
    trailer."""
    kinds = column_kinds()
    yield HEADER
    for part in parts:
        yield from _part_records(run, part, method, failures, kinds, language)
    yield TRAILER


def _part_records(
    run: EvaluationRun,
    part: MetricPart,
    method: str,
    failures: dict[GroupKey, dict[str, int]],
    kinds: list[str],
    language: str,
) -> list[bytes]:
    g, size = part.groups, part.groups.n.size
    if size == 0:
        return []
    polarity_names = np.array(POLARITIES)[g.polarity]
    width = max(len(name.encode()) for name in POLARITIES)
    polarity_bytes = np.array([name.encode() for name in POLARITIES], f"S{width}")[g.polarity]
    columns = {
        "release_id": run.release_id,
        "run_id": run.pk,
        "target_id": g.target,
        "polarity": polarity_bytes,
        "level": SummaryLevel.METRIC.value,
        "area_id": None,
        "subarea_id": None,
        "metric_version_id": g.key,
        "age_context": part.scope,
        "n_conversations": g.n,
        "n_passed": g.passed,
        "n_clusters": g.n_clusters,
        "rate": g.passed / g.n,
        "ci_low": part.low,
        "ci_high": part.high,
        "method": method,
        "n_failed": 0,
        "failures": {},
        "language": language,
    }
    # The rows of another layout: failed conversations, an undefined bound, or polarity names
    # of unequal length (one record size for all needs one length).
    failed = {
        (t, p, k): reasons
        for (level, t, p, k, scope), reasons in failures.items()
        if level == SummaryLevel.METRIC and scope == part.scope and reasons
    }
    odd = ~(np.isfinite(part.low) & np.isfinite(part.high))
    if failed:
        keys = zip(g.target.tolist(), polarity_names.tolist(), g.key.tolist(), strict=True)
        odd |= np.fromiter((key in failed for key in keys), bool, count=size)
    if len({len(name) for name in POLARITIES}) != 1:
        odd[:] = True
    records = _uniform_records(columns, kinds, size)
    if not odd.any():
        return [records.tobytes()]
    out, start = [], 0
    raw = records.view(np.uint8).reshape(size, -1)
    for i in np.flatnonzero(odd).tolist():
        out.append(raw[start:i].tobytes())
        reasons = failed.get((int(g.target[i]), str(polarity_names[i]), int(g.key[i])), {})
        values = [_value_at(columns[name], i) for name in SUMMARY_COLUMNS]
        values[SUMMARY_COLUMNS.index("polarity")] = str(polarity_names[i])
        values[SUMMARY_COLUMNS.index("n_failed")] = sum(reasons.values())
        values[SUMMARY_COLUMNS.index("failures")] = dict(sorted(reasons.items()))
        out.append(_record(values, kinds))
        start = i + 1
    out.append(raw[start:].tobytes())
    return out


def _uniform_records(columns: dict, kinds: list[str], size: int) -> np.ndarray:
    """Every row in the common layout: each value present, no failures."""
    fields: list[tuple[str, str]] = [("count", ">i2")]
    values: dict[str, object] = {"count": len(SUMMARY_COLUMNS)}
    for name, kind in zip(SUMMARY_COLUMNS, kinds, strict=True):
        value = columns[name]
        fields.append((f"{name}_length", ">i4"))
        if value is None:
            values[f"{name}_length"] = _NULL
            continue
        data = _encoded(value, kind)
        if isinstance(data, np.ndarray) and data.dtype.kind == "S":
            width = data.dtype.itemsize
        elif isinstance(data, bytes):
            width = len(data)
        else:
            width = np.dtype(_NUMBERS[kind]).itemsize
        values[f"{name}_length"] = width
        if width == 0:  # an empty text (a summary over every language): its length says it
            continue
        fields.append((name, _NUMBERS.get(kind, f"S{width}")))
        values[name] = data
    records = np.empty(size, np.dtype(fields))
    for name, value in values.items():
        records[name] = value
    return records


def _encoded(value, kind: str):
    if kind == "jsonb":
        return b"\x01" + json.dumps(value).encode()
    if kind == "varchar":
        if isinstance(value, np.ndarray):  # already bytes, one width
            return value
        return str(value).encode()
    return value


def _value_at(value, i: int):
    if isinstance(value, np.ndarray):
        return value[i].item()
    return value


def _record(values: list, kinds: list[str]) -> bytes:
    """One row's record, value by value."""
    parts = [struct.pack(">h", len(values))]
    for value, kind in zip(values, kinds, strict=True):
        if value is None or (kind == "double precision" and not np.isfinite(value)):
            parts.append(struct.pack(">i", _NULL))
        elif kind in _PACK:
            fmt = _PACK[kind]
            parts.append(struct.pack(">i", struct.calcsize(fmt)) + struct.pack(fmt, value))
        else:
            data = _encoded(value, kind)
            parts.append(struct.pack(">i", len(data)) + data)
    return b"".join(parts)
