"""Pass-rate summaries of a run, rolled up from its cells (the one GROUP BY of `run_cells`):
counts per group in NumPy, Wilson intervals on the effective sample size at every level.

Levels: overall, area, subarea, metric; each per target × polarity × age context (teen, adult,
all). A metric in several subareas counts in each of them; in an area it counts once even when
two of its subareas belong to that area (distinct counts).

`summary_rows` is `pooled_rows` (overall, area, subarea) followed by `metric_rows`, both Wilson
on the effective sample size (no resampling), which can also be built on their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.typing import NDArray

import stats as statistics
from evaluations.models import EvaluationRun
from results.models import AgeScope, SummaryLevel

from .cells import AGES, RunCells
from .rollup import Groups, distinct_rows, level_groups

DEFAULT_RESAMPLES = 10_000
# (level, target, polarity, key or None, age scope)
GroupKey = tuple[str, int, str, int | None, str]


def scope_correlations(cells: RunCells) -> dict[str, tuple[float, float]]:
    """Per age scope: the intra-cluster correlation of the run's outcomes and the mean cluster
    size, from every metric x model group (clusters: base scenarios; for "all" a base's teen
    and adult variants together). Hundreds of groups make it stable where one group's three
    clusters could not."""
    out: dict[str, tuple[float, float]] = {}
    for scope in (AgeScope.TEEN, AgeScope.ADULT, AgeScope.ALL):
        if scope == AgeScope.ALL:
            sel = np.ones(cells.size, bool)
        else:
            sel = cells.age == AGES.index(scope.value)
        if not sel.any():
            out[scope.value] = (0.0, 1.0)
            continue
        first, inverse = distinct_rows(cells.target[sel], cells.version[sel], cells.base[sel])
        keys = np.column_stack([cells.target[sel][first], cells.version[sel][first]])
        n = np.bincount(inverse, weights=cells.n[sel], minlength=len(keys))
        y = np.bincount(inverse, weights=cells.passed[sel], minlength=len(keys))
        group = keys[:, 0] * (int(keys[:, 1].max()) + 1) + keys[:, 1]
        out[scope.value] = (statistics.intra_cluster_correlation(group, y, n), float(n.mean()))
    return out


def metric_design_effects(cells: RunCells) -> dict[str, float]:
    """Design effect of a per-metric pass rate, per age scope: the run's intra-cluster
    correlation (:func:`scope_correlations`) times the mean cluster size."""
    return {
        scope: statistics.design_effect(rho, size)
        for scope, (rho, size) in scope_correlations(cells).items()
    }


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


def signature_counter(values: Iterable[tuple[int, int]]) -> tuple[tuple[int, int, int], ...]:
    """Signature of clusters given as (passed, n) pairs: sorted (passed, n, count) kinds."""
    return tuple((y, n, c) for (y, n), c in sorted(Counter(values).items()))


POLARITIES = ("positive", "negative")
LEVELS = (SummaryLevel.OVERALL, SummaryLevel.AREA, SummaryLevel.SUBAREA, SummaryLevel.METRIC)
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
    "language",
)


POOLED_LEVELS = (SummaryLevel.OVERALL, SummaryLevel.AREA, SummaryLevel.SUBAREA)
_POLARITY_NAMES = np.array(POLARITIES, dtype=object)


@dataclass(frozen=True)
class SummaryInputs:
    """What the pooled rows and the metric rows of one run both start from."""

    polarity: NDArray[np.int64]  # each cell's, index into POLARITIES
    failures: dict[GroupKey, dict[str, int]]


def summary_inputs(cells: RunCells) -> SummaryInputs:
    return SummaryInputs(polarity=polarity_codes(cells), failures=failure_counts(cells))


def polarity_codes(cells: RunCells) -> NDArray[np.int64]:
    """Each cell's metric polarity as an index into POLARITIES."""
    versions = np.array(sorted(cells.polarity), np.int64)
    codes = np.array([POLARITIES.index(cells.polarity[v]) for v in versions.tolist()], np.int64)
    at = np.searchsorted(versions, cells.version).clip(max=max(versions.size - 1, 0))
    if cells.size and (versions.size == 0 or (versions[at] != cells.version).any()):
        missing = set(cells.version.tolist()) - set(cells.polarity)
        raise KeyError(f"metric versions without a polarity: {sorted(missing)}")
    return codes[at] if cells.size else np.zeros(0, np.int64)


def summary_rows(
    run: EvaluationRun,
    cells: RunCells,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[tuple]:
    """The run's summary rows as tuples in ``SUMMARY_COLUMNS`` order (``failures`` a dict): the
    pooled levels' rows, then the metric rows. No query: counts come from the cells.
    (``n_resamples`` and ``seed`` are kept for callers; no summary row resamples.)"""
    inputs = summary_inputs(cells)
    return pooled_rows(run, cells, inputs=inputs) + metric_rows(run, cells, inputs=inputs)


def pooled_rows(
    run: EvaluationRun,
    cells: RunCells,
    *,
    inputs: SummaryInputs | None = None,
    language: str = "",
) -> list[tuple]:
    """The overall, area and subarea rows: Wilson on the effective size, each metric of a
    group with its design effect (``stats.stratified_wilson``); a percentile bootstrap over
    a subarea's three to nine base scenarios under-covers and gives 0 of 27 a zero-width
    interval. ``inputs`` spares recomputing what `metric_rows` needs too; ``language``: the
    tag the rows are written under (blank: the cells of every language)."""
    inputs = inputs or summary_inputs(cells)
    return pooled_groups(cells, inputs).rows(run, language=language)


@dataclass(frozen=True)
class PooledGroups:
    """The groups of the pooled levels, with their clusters, and the run's correlations."""

    built: list[tuple[str, str, Groups]]  # (level, age scope, groups)
    rho: dict[str, float]
    failures: dict[GroupKey, dict[str, int]]

    def rows(self, run: EvaluationRun, *, language: str = "") -> list[tuple]:
        rows: list[tuple] = []
        for level, scope, g in self.built:
            low, high = statistics.stratified_wilson(
                g.c_group, g.c_version, g.c_passed, g.c_n, self.rho[scope], n_groups=g.n.size
            )
            rows += _level_rows(
                run,
                level,
                scope,
                g,
                low,
                high,
                statistics.STRATIFIED_WILSON,
                self.failures,
                language=language,
            )
        return rows


def pooled_groups(cells: RunCells, inputs: SummaryInputs) -> PooledGroups:
    built = [
        (level, scope, groups)
        for level in POOLED_LEVELS
        for scope, groups in level_groups(cells, level, inputs.polarity, clusters=True)
    ]
    rho = {scope: r for scope, (r, _) in scope_correlations(cells).items()}
    return PooledGroups(built, rho, inputs.failures)


def metric_rows(
    run: EvaluationRun,
    cells: RunCells,
    *,
    inputs: SummaryInputs | None = None,
    language: str = "",
) -> list[tuple]:
    """The metric rows: Wilson on effective n (three base scenarios: the bootstrap
    under-covers), every row of a scope at once; no resampling."""
    inputs = inputs or summary_inputs(cells)
    rows: list[tuple] = []
    for part in metric_parts(cells, inputs):
        rows += _level_rows(
            run,
            SummaryLevel.METRIC,
            part.scope,
            part.groups,
            part.low,
            part.high,
            statistics.WILSON_EFFECTIVE,
            inputs.failures,
            language=language,
        )
    return rows


@dataclass(frozen=True)
class MetricPart:
    """The metric rows of one age scope as columns: the groups and their Wilson bounds."""

    scope: str
    groups: Groups
    low: NDArray[np.float64]
    high: NDArray[np.float64]


def metric_parts(cells: RunCells, inputs: SummaryInputs) -> list[MetricPart]:
    """`metric_rows` before it becomes tuples, one part per age scope, in the rows' order."""
    rho = {scope: r for scope, (r, _) in scope_correlations(cells).items()}
    parts = []
    for scope, g in level_groups(cells, SummaryLevel.METRIC, inputs.polarity, clusters=True):
        deff = group_design_effects(g, rho[scope])
        low, high = statistics.effective_wilson(g.passed, g.n, deff)
        parts.append(MetricPart(scope, g, low, high))
    return parts


def group_design_effects(g: Groups, run_rho: float) -> NDArray[np.float64]:
    """Each metric x model rate's design effect ``1 + (sum n_c^2 / N - 1) rho``, with ``rho``
    the metric's own intra-cluster correlation shrunk towards the run's.

    One correlation for the whole run under-covers metrics whose base scenarios differ far
    more than the run's typical metric. A metric's own estimate pools its models, which meet
    the same base scenarios (``stats.group_correlations`` with ``pool``): ``models x (G - 1)``
    degrees of freedom, 20 for ten models on three base scenarios. Its weight against the
    run's, ``df / (df + 4)`` (``stats.shrunk_correlation``), is the empirical-Bayes weight of
    an estimate whose variance falls as ``1 / df``; a metric at 0 % or 100 % in every model
    takes the run's."""
    metric = np.unique(g.key, return_inverse=True)[1].ravel()
    rho, degrees, varied = statistics.group_correlations(
        g.c_group, g.c_passed, g.c_n, n_groups=g.n.size, pool=metric
    )
    shrunk = statistics.shrunk_correlation(rho, degrees, varied, run_rho)[metric]
    squares = np.bincount(g.c_group, weights=g.c_n.astype(float) ** 2, minlength=g.n.size)
    with np.errstate(all="ignore"):
        mean_size = np.where(g.n > 0, squares / g.n, 1.0)
    return 1.0 + np.maximum(mean_size - 1.0, 0.0) * shrunk


def _level_rows(
    run: EvaluationRun,
    level: str,
    scope: str,
    g: Groups,
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    method: str,
    failures: dict[GroupKey, dict[str, int]],
    *,
    language: str = "",
) -> list[tuple]:
    """The rows of one level and age scope, built column by column."""
    size = g.n.size
    targets = g.target.tolist()
    polarities = _POLARITY_NAMES[g.polarity].tolist()
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
    return list(
        zip(
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
            repeat(language, size),
            strict=True,
        )
    )


def _finite_or_none(values: NDArray[np.float64]) -> list[float | None]:
    out = values.tolist()
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        out[i] = None
    return out
