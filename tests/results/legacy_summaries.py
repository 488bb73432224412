"""Reference for the summary refresh: the row-by-row implementation it replaced, kept verbatim
(one GROUP BY per level in the database, one `bootstrap_ci` per distinct group composition,
model instances per row) so tests can check the vectorised refresh gives the same figures.

Levels: overall, area, subarea, metric; each per target × polarity × age context (teen, adult,
all). A metric in several subareas counts in each of them; in an area it counts once even when
two of its subareas belong to that area (distinct counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from django.db.models import Count, Q
from numpy.typing import NDArray

import stats as statistics
from evaluations.models import EvaluationRun
from results.models import AgeScope, PassRateSummary, SummaryLevel
from results.services.cells import AGES, RunCells, judged_conversations
from stats.estimates import Estimate

DEFAULT_RESAMPLES = 10_000
VERSION = "scenario__metric_version_id"
POLARITY = "scenario__metric_version__polarity"
AGE = "scenario__age_context"
LEVEL_FIELDS = {
    SummaryLevel.OVERALL: None,
    SummaryLevel.AREA: "scenario__metric_version__subareas__area_id",
    SummaryLevel.SUBAREA: "scenario__metric_version__subareas",
    SummaryLevel.METRIC: VERSION,
}

# (level, target, polarity, key or None, age scope)
GroupKey = tuple[str, int, str, int | None, str]


def summary_counts(run: EvaluationRun) -> dict[GroupKey, tuple[int, int]]:
    """n and n_passed of every group: one GROUP BY query per level (four in all).

    The age context is part of each GROUP BY; "all" is the sum of the teen and adult groups,
    which is exact because a conversation has exactly one age context.
    """
    counts: dict[GroupKey, tuple[int, int]] = {}
    base = judged_conversations(run).order_by()
    for level, key_field in LEVEL_FIELDS.items():
        fields = ["target_id", POLARITY, AGE] + ([key_field] if key_field else [])
        # Joining through subareas repeats a conversation once per subarea; within an area that
        # would double-count a metric in two of its subareas, hence distinct.
        distinct = level == SummaryLevel.AREA
        rows = base.values_list(*fields).annotate(
            n=Count("id", distinct=distinct),
            passed=Count("id", filter=Q(verdict_passed=True), distinct=distinct),
        )
        for row in rows:
            target, polarity, age = row[:3]
            key = row[3] if key_field else None
            n, passed = row[-2], row[-1]
            if key_field and key is None:
                continue  # a metric version without subareas has no subarea/area row
            counts[(level, target, polarity, key, age)] = (n, passed)
            all_key = (level, target, polarity, key, AgeScope.ALL.value)
            prev_n, prev_passed = counts.get(all_key, (0, 0))
            counts[all_key] = (prev_n + n, prev_passed + passed)
    return counts


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
        cols = np.column_stack([cells.target[sel], cells.version[sel], cells.base[sel]])
        keys, inverse = np.unique(cols, axis=0, return_inverse=True)
        inverse = inverse.ravel()
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
    clusters: dict[tuple[int, str], dict[tuple[int, int], list[int]]] = {}
    failed_n: dict[tuple[int, str], int] = {}

    def cluster(target: int, version: int, base: int) -> list[int] | None:
        polarity = cells.polarity.get(version)
        if polarity is None:
            return None
        return clusters.setdefault((target, polarity), {}).setdefault((version, base), [0, 0])

    for target, version, base, n, passed in zip(
        cells.target.tolist(),
        cells.version.tolist(),
        cells.base.tolist(),
        cells.n.tolist(),
        cells.passed.tolist(),
        strict=True,
    ):
        acc = cluster(target, version, base)
        if acc is not None:
            acc[0] += int(passed)
            acc[1] += int(n)
    for target, version, base, _age, _reason, count in cells.failed:
        acc = cluster(target, version, base)
        if acc is not None:
            acc[1] += count
            key = (target, cells.polarity[version])
            failed_n[key] = failed_n.get(key, 0) + count
    out = []
    for (target, polarity), by_cluster in sorted(
        clusters.items(), key=lambda kv: (kv[0][1], names.get(kv[0][0], ""))
    ):
        pairs = [tuple(v) for v in by_cluster.values()]
        n = sum(m for _, m in pairs)
        passed = sum(y for y, _ in pairs)
        low, high, g = _signature_interval(signature_counter(pairs), n_resamples, seed)
        estimate = Estimate(
            passed / n,
            low,
            high,
            method="cluster bootstrap over base scenarios; failed = fail",
            n=n,
            n_clusters=g,
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


def _group_signatures(
    cells: RunCells, level: str
) -> Iterable[tuple[GroupKey, tuple[tuple[int, int, int], ...]]]:
    """Each group's clusters as a multiset of (passed, n) -> count.

    The clustered bootstrap of a mean depends on a group's data only through this multiset, so
    groups with the same composition (very common at metric level) share one interval.
    """
    polarity_code = {"positive": 0, "negative": 1}
    polarity_name = ("positive", "negative")
    cell_idx, key = _memberships(cells, level)
    if cell_idx.size == 0:
        return
    pol = np.array([polarity_code[cells.polarity[v]] for v in cells.version.tolist()], np.int64)
    for scope in (AgeScope.TEEN, AgeScope.ADULT, AgeScope.ALL):
        if scope == AgeScope.ALL:
            sel = np.ones(cell_idx.size, bool)
            age_part = np.zeros(cell_idx.size, np.int64)
        else:
            sel = cells.age[cell_idx] == AGES.index(scope.value)
            age_part = cells.age[cell_idx]
        ci = cell_idx[sel]
        if ci.size == 0:
            continue
        # A cluster is (target, version, base); for one age it is a single cell, for "all" the
        # teen and adult cells of the same base scenario merge.
        cluster_cols = np.column_stack(
            [cells.target[ci], pol[ci], key[sel], cells.version[ci], cells.base[ci], age_part[sel]]
        )
        clusters, inverse = np.unique(cluster_cols, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        c_n = np.bincount(inverse, weights=cells.n[ci], minlength=len(clusters))
        c_y = np.bincount(inverse, weights=cells.passed[ci], minlength=len(clusters))
        kinds, kind_count = np.unique(
            np.column_stack([clusters[:, :3], c_y.astype(np.int64), c_n.astype(np.int64)]),
            axis=0,
            return_counts=True,
        )
        # Rows are sorted by (target, polarity, key): split where the group changes.
        change = np.flatnonzero(np.any(np.diff(kinds[:, :3], axis=0) != 0, axis=1)) + 1
        bounds = np.concatenate([[0], change, [len(kinds)]])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            target, polarity, group = kinds[lo, :3].tolist()
            signature = tuple(
                (int(y), int(n), int(c))
                for (y, n), c in zip(kinds[lo:hi, 3:5].tolist(), kind_count[lo:hi], strict=True)
            )
            group_key = None if level == SummaryLevel.OVERALL else group
            yield (level, target, polarity_name[polarity], group_key, scope.value), signature


def _signature_interval(
    signature: tuple[tuple[int, int, int], ...], n_resamples: int, seed: int
) -> tuple[float | None, float | None, int]:
    n_clusters = sum(c for _, _, c in signature)
    if n_clusters < 2:
        return None, None, n_clusters
    values: list[float] = []
    clusters: list[int] = []
    label = 0
    for y, n, count in signature:
        for _ in range(count):
            values.extend([1.0] * y + [0.0] * (n - y))
            clusters.extend([label] * n)
            label += 1
    low, high = statistics.bootstrap_ci(
        np.array(values), np.array(clusters), n_resamples=n_resamples, seed=seed
    )
    return low, high, n_clusters


def summary_rows(
    run: EvaluationRun,
    cells: RunCells,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[PassRateSummary]:
    """Unsaved summary rows of the run: DB counts, one bootstrap per distinct group composition."""
    counts = summary_counts(run)
    failures = failure_counts(cells)
    deff = metric_design_effects(cells)
    memo: dict[tuple, tuple[float | None, float | None, int]] = {}
    rows: list[PassRateSummary] = []
    for level in LEVEL_FIELDS:
        for group_key, signature in _group_signatures(cells, level):
            n, passed = counts.get(group_key, (0, 0))
            if n == 0:
                continue
            method = ""
            if level == SummaryLevel.METRIC:
                # Three base scenarios: the bootstrap under-covers; Wilson on effective n holds.
                # Its interval is filled in below, for all metric rows at once.
                n_clusters = sum(c for _, _, c in signature)
                low = high = None
                method = statistics.WILSON_EFFECTIVE
            else:
                if signature not in memo:
                    memo[signature] = _signature_interval(signature, n_resamples, seed)
                low, high, n_clusters = memo[signature]
            _, target, polarity, key, age = group_key
            failed = failures.get(group_key, {})
            rows.append(
                PassRateSummary(
                    release_id=run.release_id,
                    run_id=run.pk,
                    target_id=target,
                    polarity=polarity,
                    level=level,
                    area_id=key if level == SummaryLevel.AREA else None,
                    subarea_id=key if level == SummaryLevel.SUBAREA else None,
                    metric_version_id=key if level == SummaryLevel.METRIC else None,
                    age_context=age,
                    n_conversations=n,
                    n_passed=passed,
                    n_clusters=n_clusters,
                    rate=passed / n,
                    ci_low=low,
                    ci_high=high,
                    method=method,
                    n_failed=sum(failed.values()),
                    failures=dict(sorted(failed.items())),
                )
            )
    metric_rows = [r for r in rows if r.level == SummaryLevel.METRIC]
    if metric_rows:
        low, high = statistics.effective_wilson(
            np.array([r.n_passed for r in metric_rows], np.float64),
            np.array([r.n_conversations for r in metric_rows], np.float64),
            np.array([deff[r.age_context] for r in metric_rows]),
        )
        for row, lo, hi in zip(metric_rows, low.tolist(), high.tolist(), strict=True):
            row.ci_low, row.ci_high = lo, hi
    return rows


def signature_counter(values: Iterable[tuple[int, int]]) -> tuple[tuple[int, int, int], ...]:
    """Signature of clusters given as (passed, n) pairs -- for tests and notebooks."""
    return tuple((y, n, c) for (y, n), c in sorted(Counter(values).items()))
