"""Pass-rate summaries of a run, rolled up from its cells (the one GROUP BY of `run_cells`):
counts per group in NumPy, cluster-bootstrap intervals, Wilson on effective n per metric.

Levels: overall, area, subarea, metric; each per target × polarity × age context (teen, adult,
all). A metric in several subareas counts in each of them; in an area it counts once even when
two of its subareas belong to that area (distinct counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.typing import NDArray

from evaluations.models import EvaluationRun
from results import statistics
from results.estimates import Estimate
from results.models import AgeScope, SummaryLevel

from .cells import AGES, RunCells

DEFAULT_RESAMPLES = 10_000
# (level, target, polarity, key or None, age scope)
GroupKey = tuple[str, int, str, int | None, str]


def metric_design_effects(cells: RunCells) -> dict[str, float]:
    """Design effect of a per-metric pass rate, per age scope, from the whole run's cells.

    One intra-cluster correlation over every metric x model group (clusters: base scenarios;
    for "all" a base's teen and adult variants together), times the mean cluster size.
    """
    out: dict[str, float] = {}
    for scope in (AgeScope.TEEN, AgeScope.ADULT, AgeScope.ALL):
        if scope == AgeScope.ALL:
            sel = np.ones(cells.size, bool)
        else:
            sel = cells.age == AGES.index(scope.value)
        if not sel.any():
            out[scope.value] = 1.0
            continue
        first, inverse = _distinct_rows(cells.target[sel], cells.version[sel], cells.base[sel])
        keys = np.column_stack([cells.target[sel][first], cells.version[sel][first]])
        n = np.bincount(inverse, weights=cells.n[sel], minlength=len(keys))
        y = np.bincount(inverse, weights=cells.passed[sel], minlength=len(keys))
        group = keys[:, 0] * (int(keys[:, 1].max()) + 1) + keys[:, 1]
        rho = statistics.intra_cluster_correlation(group, y, n)
        out[scope.value] = statistics.design_effect(rho, float(n.mean()))
    return out


def failure_counts(cells: RunCells) -> dict[GroupKey, dict[str, int]]:
    """Failed conversations of every group, by reason, from the cells' failed rows.

    A failure counts in its metric, in each subarea of the metric, once in each of its areas,
    and overall, in its age context and in "all" -- the same membership as the pass rates.
    """
    out: dict[GroupKey, dict[str, int]] = {}
    for target, version, _base, age, reason, count in cells.failed:
        polarity = cells.polarity.get(version)
        if polarity is None:
            continue
        keys = [
            (SummaryLevel.OVERALL, None),
            (SummaryLevel.METRIC, version),
            *((SummaryLevel.SUBAREA, s) for s in cells.subareas.get(version, [])),
            *((SummaryLevel.AREA, a) for a in cells.areas.get(version, [])),
        ]
        for level, key in keys:
            for scope in (age, AgeScope.ALL.value):
                reasons = out.setdefault((level.value, target, polarity, key, scope), {})
                reasons[reason] = reasons.get(reason, 0) + count
    return out


def failed_as_fail(
    cells: RunCells, names: dict[int, str], *, n_resamples: int, seed: int
) -> list[dict]:
    """Sensitivity of each model's overall pass rate: failed conversations counted as fails.

    Same cluster bootstrap over base scenarios as the published rate, on the cells (no query).
    """
    code = {v: POLARITIES.index(p) for v, p in cells.polarity.items()}
    failed = np.array(
        [(t, v, b, code[v], c) for t, v, b, _age, _reason, c in cells.failed if v in code],
        np.int64,
    ).reshape(-1, 5)
    pol = np.array([code[v] for v in cells.version.tolist()], np.int64).reshape(-1)
    target = np.concatenate([cells.target, failed[:, 0]])
    polarity = np.concatenate([pol, failed[:, 3]])
    version = np.concatenate([cells.version, failed[:, 1]])
    base = np.concatenate([cells.base, failed[:, 2]])
    passed = np.concatenate([cells.passed, np.zeros(len(failed))])
    n = np.concatenate([cells.n, failed[:, 4].astype(np.float64)])
    if target.size == 0:
        return []
    # Clusters (target, polarity, version, base) with failures counted as fails.
    first, inverse = _distinct_rows(target, polarity, version, base)
    c_y = np.bincount(inverse, weights=passed).astype(np.int64)
    c_n = np.bincount(inverse, weights=n).astype(np.int64)
    c_target, c_pol = target[first], polarity[first]
    g_first, g_of = _distinct_rows(c_target, c_pol)
    k_first, k_of = _distinct_rows(g_of, c_y, c_n)
    kinds = np.column_stack([c_y[k_first], c_n[k_first], np.bincount(k_of)]).tolist()
    edges = [0, *(np.flatnonzero(np.diff(g_of[k_first])) + 1).tolist(), len(kinds)]
    by_group = {
        (int(c_target[f]), POLARITIES[c_pol[f]]): tuple(map(tuple, kinds[lo:hi]))
        for f, lo, hi in zip(g_first.tolist(), edges[:-1], edges[1:], strict=True)
    }
    failed_n: dict[tuple[int, str], int] = {}
    for t, _v, _b, p, c in failed.tolist():
        failed_n[(t, POLARITIES[p])] = failed_n.get((t, POLARITIES[p]), 0) + c
    groups = sorted(by_group.items(), key=lambda kv: (kv[0][1], names.get(kv[0][0], "")))
    signatures = [signature for _, signature in groups]
    lows, highs = statistics.clustered_mean_intervals(signatures, n_resamples, seed=seed)
    out = []
    for ((target, polarity), _), signature, low, high in zip(
        groups, signatures, lows.tolist(), highs.tolist(), strict=True
    ):
        n = sum(m * c for _, m, c in signature)
        passed = sum(y * c for y, _, c in signature)
        estimate = Estimate(
            passed / n,
            low,
            high,
            method="cluster bootstrap over base scenarios; failed = fail",
            n=n,
            n_clusters=sum(c for _, _, c in signature),
        )
        out.append(
            {
                "target": names.get(target, str(target)),
                "polarity": polarity,
                "n_failed": failed_n.get((target, polarity), 0),
                "estimate": estimate.as_dict(),
            }
        )
    return out


def signature_counter(values: Iterable[tuple[int, int]]) -> tuple[tuple[int, int, int], ...]:
    """Signature of clusters given as (passed, n) pairs: sorted (passed, n, count) kinds."""
    return tuple((y, n, c) for (y, n), c in sorted(Counter(values).items()))


def _memberships(cells: RunCells, level: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(cell index, group key) pairs: a cell belongs to one group per subarea/area of its metric."""
    if level == SummaryLevel.OVERALL:
        return np.arange(cells.size), np.zeros(cells.size, np.int64)
    if level == SummaryLevel.METRIC:
        return np.arange(cells.size), cells.version
    mapping = cells.subareas if level == SummaryLevel.SUBAREA else cells.areas
    pairs = sorted((v, k) for v, keys in mapping.items() for k in keys)
    if not pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pv = np.array([p[0] for p in pairs], np.int64)
    pk = np.array([p[1] for p in pairs], np.int64)
    start = np.searchsorted(pv, cells.version, "left")
    stop = np.searchsorted(pv, cells.version, "right")
    per_cell = stop - start
    cell_idx = np.repeat(np.arange(cells.size), per_cell)
    offsets = np.arange(per_cell.sum()) - np.repeat(np.cumsum(per_cell) - per_cell, per_cell)
    return cell_idx, pk[np.repeat(start, per_cell) + offsets]


def _distinct_rows(*cols: NDArray[np.int64]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Distinct rows of the columns in lexicographic order: the index of one row of each, and
    the distinct row of every row (as ``np.unique(axis=0)``, by one sort of the columns packed
    into one integer key when they fit, else by one lexsort)."""
    key = _packed_key(cols)
    if key is not None:
        order = np.argsort(key)
        ordered = key[order]
        change = np.ones(len(order), bool)
        np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    else:
        order = np.lexsort(cols[::-1])
        stacked = np.column_stack(cols)[order]
        change = np.ones(len(order), bool)
        change[1:] = np.any(stacked[1:] != stacked[:-1], axis=1)
    inverse = np.empty(len(order), np.intp)
    inverse[order] = np.cumsum(change) - 1
    return order[change], inverse


def _packed_key(cols: tuple[NDArray[np.int64], ...]) -> NDArray[np.int64] | None:
    """One int64 per row ordered as the rows are lexicographically, or None if it would not fit."""
    if not cols or cols[0].size == 0:
        return None
    key = np.zeros(cols[0].size, np.int64)
    span = 1
    for col in cols:
        low, high = int(col.min()), int(col.max())
        width = high - low + 1
        span *= width
        if span >= 2**62:
            return None
        key *= width
        key += col
        key -= low
    return key


@dataclass
class _Groups:
    """The groups of one level and age scope, sorted by (target, polarity, key)."""

    target: NDArray[np.int64]
    polarity: NDArray[np.int64]  # index into POLARITIES
    key: NDArray[np.int64]
    n: NDArray[np.int64]
    passed: NDArray[np.int64]
    n_clusters: NDArray[np.int64]
    # Bootstrap levels only: each group's clusters as sorted (passed, n, count) kinds.
    signatures: list[tuple[tuple[int, int, int], ...]]


def _groups(cells: RunCells, level: str, scope: str, pol: NDArray[np.int64]) -> _Groups | None:
    cell_idx, key = _memberships(cells, level)
    if scope == AgeScope.ALL:
        sel = np.ones(cell_idx.size, bool)
        age_part = np.zeros(cell_idx.size, np.int64)
    else:
        sel = cells.age[cell_idx] == AGES.index(scope)
        age_part = cells.age[cell_idx]
    ci, key, age_part = cell_idx[sel], key[sel], age_part[sel]
    if ci.size == 0:
        return None
    # A cluster is (target, version, base); for one age it is a single cell, for "all" the teen
    # and adult cells of the same base scenario merge.
    cols = (cells.target[ci], pol[ci], key, cells.version[ci], cells.base[ci], age_part)
    first, inverse = _distinct_rows(*cols)
    c_n = np.bincount(inverse, weights=cells.n[ci]).astype(np.int64)
    c_y = np.bincount(inverse, weights=cells.passed[ci]).astype(np.int64)
    c_target, c_pol, c_key = (col[first] for col in cols[:3])
    g_first, g_of = _distinct_rows(c_target, c_pol, c_key)
    groups = _Groups(
        target=c_target[g_first],
        polarity=c_pol[g_first],
        key=c_key[g_first],
        n=np.bincount(g_of, weights=c_n).astype(np.int64),
        passed=np.bincount(g_of, weights=c_y).astype(np.int64),
        n_clusters=np.bincount(g_of),
        signatures=[],
    )
    if level != SummaryLevel.METRIC:
        k_first, k_of = _distinct_rows(g_of, c_y, c_n)
        k_count = np.bincount(k_of)
        bounds = np.flatnonzero(np.diff(g_of[k_first])) + 1
        kinds = np.column_stack([c_y[k_first], c_n[k_first], k_count]).tolist()
        edges = [0, *bounds.tolist(), len(kinds)]
        groups.signatures = [
            tuple(map(tuple, kinds[lo:hi])) for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        ]
    return groups


POLARITIES = ("positive", "negative")
LEVELS = (SummaryLevel.OVERALL, SummaryLevel.AREA, SummaryLevel.SUBAREA, SummaryLevel.METRIC)
SCOPES = (AgeScope.TEEN.value, AgeScope.ADULT.value, AgeScope.ALL.value)
SUMMARY_COLUMNS = (
    "release_id",
    "run_id",
    "target_id",
    "polarity",
    "level",
    "area_id",
    "subarea_id",
    "metric_version_id",
    "age_context",
    "n_conversations",
    "n_passed",
    "n_clusters",
    "rate",
    "ci_low",
    "ci_high",
    "method",
    "n_failed",
    "failures",
)


def summary_rows(
    run: EvaluationRun,
    cells: RunCells,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[tuple]:
    """The run's summary rows as tuples in ``SUMMARY_COLUMNS`` order (``failures`` a dict).

    No query: counts come from the cells; one bootstrap per distinct group composition (the
    clustered bootstrap of a mean depends on a group only through it), Wilson on effective n
    for every metric row at once.
    """
    failures = failure_counts(cells)
    deff = metric_design_effects(cells)
    code = {v: POLARITIES.index(p) for v, p in cells.polarity.items()}
    pol = np.array([code[v] for v in cells.version.tolist()], np.int64).reshape(-1)
    built: list[tuple[str, str, _Groups]] = []
    for level in LEVELS:
        for scope in SCOPES:
            groups = _groups(cells, level, scope, pol)
            if groups is not None:
                built.append((level, scope, groups))
    # Bootstrap every distinct composition of the bootstrap levels in one call.
    distinct = sorted(
        {sig for level, _, g in built if level != SummaryLevel.METRIC for sig in g.signatures}
    )
    lows, highs = statistics.clustered_mean_intervals(distinct, n_resamples, seed=seed)
    index = {sig: i for i, sig in enumerate(distinct)}
    rows: list[tuple] = []
    for level, scope, g in built:
        if level == SummaryLevel.METRIC:
            # Three base scenarios: the bootstrap under-covers; Wilson on effective n holds.
            d = np.full(g.n.size, deff[scope])
            low, high = statistics.effective_wilson(g.passed, g.n, d)
            method = statistics.WILSON_EFFECTIVE
        else:
            at = np.array([index[sig] for sig in g.signatures], np.intp)
            low, high = lows[at], highs[at]
            method = ""
        rows.extend(_level_rows(run, level, scope, g, low, high, method, failures))
    return rows


def metric_rows(run: EvaluationRun, cells: RunCells) -> list[tuple]:
    """TEMPORARY split (replaced on merge)."""
    return [r for r in summary_rows(run, cells, n_resamples=10) if r[4] == SummaryLevel.METRIC]


def bootstrap_rows(
    run: EvaluationRun, cells: RunCells, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> list[tuple]:
    """TEMPORARY split (replaced on merge)."""
    rows = summary_rows(run, cells, n_resamples=n_resamples, seed=seed)
    return [r for r in rows if r[4] != SummaryLevel.METRIC]


def _level_rows(
    run: EvaluationRun,
    level: str,
    scope: str,
    g: _Groups,
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    method: str,
    failures: dict[GroupKey, dict[str, int]],
) -> Iterable[tuple]:
    """The rows of one level and age scope, built column by column."""
    size = g.n.size
    targets = g.target.tolist()
    polarities = np.array(POLARITIES, dtype=object)[g.polarity].tolist()
    keys = g.key.tolist()
    nothing = [None] * size
    if failures:
        group_keys = nothing if level == SummaryLevel.OVERALL else keys
        failed = [
            failures.get((level, t, p, k, scope), {})
            for t, p, k in zip(targets, polarities, group_keys, strict=True)
        ]
        n_failed = [sum(f.values()) for f in failed]
        reasons = [dict(sorted(f.items())) for f in failed]
    else:
        n_failed = repeat(0, size)
        reasons = [{} for _ in range(size)]
    return zip(
        repeat(run.release_id, size),
        repeat(run.pk, size),
        targets,
        polarities,
        repeat(level, size),
        keys if level == SummaryLevel.AREA else nothing,
        keys if level == SummaryLevel.SUBAREA else nothing,
        keys if level == SummaryLevel.METRIC else nothing,
        repeat(scope, size),
        g.n.tolist(),
        g.passed.tolist(),
        g.n_clusters.tolist(),
        (g.passed / g.n).tolist(),
        _finite_or_none(low),
        _finite_or_none(high),
        repeat(method, size),
        n_failed,
        reasons,
        strict=True,
    )


def _finite_or_none(values: NDArray[np.float64]) -> list[float | None]:
    return np.where(np.isfinite(values), values.astype(object), None).tolist()
