"""Judge repeatability of a run: do the repeated judgments of a conversation agree?

Unanimity and Fleiss' kappa over the conversations with all their judgments, overall (cluster
bootstrap over base scenarios) and per metric (two-stage bootstrap), from one GROUP BY of the
run's judgments that evidence verification shares.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from django.db.models import Count, Q
from django.utils.translation import gettext_noop

import stats as statistics
from evaluations.models import ConversationStatus, EvaluationRun, Judgment
from metrics_registry.models import MetricVersion
from stats import (
    cluster_sum_distribution,
    fleiss_from_sums,
    fleiss_item_sums,
    percentile_interval,
)
from stats.bounds import COEFFICIENT_HULL, DEFAULT_PRIOR_ICC, cluster_correlation
from stats.coefficients import fleiss_coefficient
from stats.estimates import MIN_ITEMS, Estimate
from stats.two_stage import two_stage_weights

from .cells import numeric_rows


def _num(value: float | None) -> float | None:
    """JSON-safe float: NaN (undefined) becomes None."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


CLUSTERED = "cluster bootstrap over base scenarios"
TWO_STAGE = "two-stage bootstrap: base scenarios, then conversations within each"


JUDGMENT_COLUMNS = (
    "conversation",
    "version",
    "base",
    "k",
    "present",
    "unverified",
    "reasked",
    "completed",
)


def judgment_counts(run: EvaluationRun, *, first_judge_only: bool = False) -> np.ndarray:
    """One row per judged conversation of the run (`JUDGMENT_COLUMNS`): its metric version and
    base scenario, its judgments, how many say present, have unverified quotes, were re-asked
    for evidence, and its judgments again if it is completed (else 0).

    One GROUP BY over the judgments serves judge repeatability and evidence verification.
    ``first_judge_only``: the readings of the run's own judge alone (a panel's first seat),
    whose repetitions are what repeatability measures.
    """
    completed = Q(conversation__status=ConversationStatus.COMPLETED)
    judgments = Judgment.objects.filter(conversation__run=run)
    if first_judge_only:
        judgments = judgments.filter(repetition__lt=run.judgments_per_conversation)
    rows = numeric_rows(
        judgments.values_list(
            "conversation_id",
            "conversation__scenario__metric_version_id",
            "conversation__scenario__base_index",
        )
        .annotate(
            k=Count("id"),
            present=Count("id", filter=Q(present=True)),
            unverified=Count("id", filter=Q(has_unverified_quotes=True)),
            reasked=Count("id", filter=Q(reasked_for_evidence=True)),
            completed=Count("id", filter=completed),
        )
        .order_by()
    )
    counts = np.array(rows, dtype=np.int64).reshape(-1, len(JUDGMENT_COLUMNS))
    # In conversation order whatever plan the server chose (a hash or a sorted aggregate): the
    # two-stage bootstrap draws units by position and the sums add in row order, so the figures
    # would otherwise move when the planner's statistics do.
    return counts[np.argsort(counts[:, 0], kind="stable")]


def _cluster_codes(version: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Codes of the (version, base) pairs in their sorted order, as ``np.unique(axis=0)``
    numbers them, from one packed integer key (non-negative ids)."""
    key = version.astype(np.int64) * (int(base.max(initial=0)) + 1) + base
    return np.unique(key, return_inverse=True)[1].ravel()


def _repeatability_point(
    present: np.ndarray, raters: int, clusters: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-item columns [unanimous, Fleiss' item sums...], their per-cluster sums, and g."""
    counts = np.column_stack([present, raters - present])
    codes = np.unique(clusters, return_inverse=True)[1].ravel()
    g = int(codes.max()) + 1
    per_item = np.column_stack(
        [(present == 0) | (present == raters), fleiss_item_sums(counts)]
    ).astype(np.float64)
    sums = np.zeros((g, per_item.shape[1]))
    np.add.at(sums, codes, per_item)
    return per_item, sums, g


def _repeatability_stat(resampled: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.column_stack(
            [resampled[:, 0] / resampled[:, 2], fleiss_from_sums(resampled[:, 1:])]
        )


def _repeatability_figures(
    present: np.ndarray,
    raters: int,
    clusters: np.ndarray,
    n_resamples: int,
    seed: int,
    interval: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    two_stage: bool = False,
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> dict[str, Any]:
    """Unanimity and Fleiss' kappa of `present[i]` "present" votes out of `raters`, as estimates.

    Both are functions of per-item sums, so one resampling serves the two. `two_stage`
    resamples conversations within the drawn base scenarios too: a metric has only three.
    `interval`: their (low, high) already drawn (many metrics at once, `judge_repeatability`).
    `prior_icc`: the intra-cluster correlation the data's own is shrunk towards.
    """
    per_item, sums, g = _repeatability_point(present, raters, clusters)
    n = int(present.size)
    point = per_item.sum(axis=0)[None, :]
    unanimity = float(point[0, 0] / point[0, 2])
    kappa = float(fleiss_from_sums(point[:, 1:])[0])
    low = high = np.array([np.nan, np.nan])
    if interval is not None:
        low, high = interval
    elif two_stage and n >= 2:
        codes = np.unique(clusters, return_inverse=True)[1].ravel()
        dist = statistics.two_stage_sum_distribution(
            per_item, codes, _repeatability_stat, n_resamples=n_resamples, seed=seed
        )
        low, high = percentile_interval(dist)
    elif g >= 2:
        dist = cluster_sum_distribution(
            sums, _repeatability_stat, n_resamples=n_resamples, seed=seed
        )
        low, high = percentile_interval(dist)
    return _repeatability_estimates(
        unanimity,
        kappa,
        low,
        high,
        per_item,
        clusters,
        raters,
        TWO_STAGE if two_stage else CLUSTERED,
        prior_icc,
    )


def _repeatability_estimates(
    unanimity: float,
    kappa: float,
    low: np.ndarray,
    high: np.ndarray,
    per_item: np.ndarray,
    clusters: np.ndarray,
    raters: int,
    method: str,
    prior_icc: float = DEFAULT_PRIOR_ICC,
) -> dict[str, Any]:
    """The figures of `_repeatability_figures` from their point values, the bootstrap's
    (low, high) pairs and the per-item columns in their ``clusters``: unanimity, a proportion,
    gets the Wilson interval on its effective size; kappa the hull of its bootstrap and the
    image of that interval (`stats.coefficient_interval`), so neither collapses to a point
    when every conversation is unanimous. ``prior_icc``: the correlation a metric's own is
    shrunk towards (the run's)."""
    codes = np.unique(clusters, return_inverse=True)[1].ravel()
    n, g = int(per_item.shape[0]), int(codes.max()) + 1
    common = {"method": f"{COEFFICIENT_HULL} ({method})", "n": n, "n_clusters": g}
    kappa_value = _num(kappa)
    if kappa_value is not None and n >= MIN_ITEMS:
        bootstrap = (
            (float(low[1]), float(high[1])) if np.isfinite([low[1], high[1]]).all() else None
        )
        bounds = statistics.coefficient_interval(
            kappa_value,
            fleiss_coefficient(per_item[:, 1:]),
            per_item[:, 1:].sum(axis=0)[None, :],
            codes,
            bootstrap=bootstrap,
            prior_icc=prior_icc,
        )
        kappa_estimate = Estimate(kappa_value, *bounds, unit="coefficient", **common)
    else:
        kappa_estimate = Estimate.insufficient(
            unit="coefficient", reason=gettext_noop("undefined (no variation)"), **common
        )
    unanimous = statistics.proportion_from_clusters(
        np.bincount(codes, weights=per_item[:, 0]),
        np.bincount(codes),
        over="base scenarios",
        prior_icc=prior_icc,
        min_n=1,
    )
    return {
        "n_conversations": n,
        "n_clusters": g,
        "judgments_per_conversation": raters,
        "unanimity": unanimous.as_dict(),
        "fleiss_kappa": kappa_estimate.as_dict(),
    }


def judge_repeatability(
    run: EvaluationRun,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    per_metric_resamples: int = 2_000,
    counts: np.ndarray | None = None,
    metric_keys: dict[int, str] | None = None,
) -> dict[str, Any]:
    """Share of conversations whose repeated judgments agree, and Fleiss' kappa across them.

    Only conversations with the run's full number of judgments enter (Fleiss' kappa needs the
    same number of ratings per item). Per metric (fewer resamples: there are hundreds of
    metrics) a one-stage bootstrap over three base scenarios has almost no distinct resamples,
    so conversations are resampled within the drawn base scenarios as well. ``counts``: the
    run's `judgment_counts`, if already read; ``metric_keys``: metric keys by version already
    read (the others are looked up).
    """
    if counts is None:
        counts = judgment_counts(run)
    raters = run.judgments_per_conversation
    if raters < 2 or counts.shape[0] == 0:
        return {
            "available": False,
            "reason": gettext_noop("This run judged each conversation only once."),
        }
    arr = counts[:, [JUDGMENT_COLUMNS.index(c) for c in ("version", "base", "k", "present")]]
    full = arr[:, 2] == raters
    arr = arr[full]
    if arr.size == 0:
        return {
            "available": False,
            "reason": gettext_noop("No conversation has all its judgments yet."),
        }
    version, base, present = arr[:, 0], arr[:, 1], arr[:, 3]
    overall = _repeatability_figures(
        present, raters, _cluster_codes(version, base), n_resamples, seed
    )
    per_metric = []
    order = np.argsort(version, kind="stable")
    version_sorted = version[order]
    bounds = np.flatnonzero(np.diff(version_sorted)) + 1
    names = dict(metric_keys or {})
    missing = set(np.unique(version).tolist()) - set(names)
    if missing:
        names.update(MetricVersion.objects.filter(pk__in=missing).values_list("pk", "metric__key"))
    groups = np.split(order, bounds)
    # Every metric's figures as on its own: per-item columns computed once for all, the
    # two-stage weights drawn once per shape (cluster sizes) and shared by the metrics of that
    # shape, the percentiles taken in one call.
    counts = np.column_stack([present, raters - present])
    per_item = np.column_stack(
        [(present == 0) | (present == raters), fleiss_item_sums(counts)]
    ).astype(np.float64)
    point = np.array([per_item[idx].sum(axis=0) for idx in groups])
    with np.errstate(all="ignore"):
        unanimity = point[:, 0] / point[:, 2]
        kappa = fleiss_from_sums(point[:, 1:])
    low, high = _per_metric_intervals(
        per_item, groups, base, n_resamples=per_metric_resamples, seed=seed
    )
    # Each metric's correlation of unanimity is shrunk towards the run's (its three base
    # scenarios say little about it on their own).
    run_codes = _cluster_codes(version, base)
    run_icc = cluster_correlation(
        np.bincount(run_codes, weights=per_item[:, 0]), np.bincount(run_codes)
    )
    for i, idx in enumerate(groups):
        mv = int(version[idx[0]])
        figures = _repeatability_estimates(
            float(unanimity[i]),
            float(kappa[i]),
            low[i],
            high[i],
            per_item[idx],
            base[idx],
            raters,
            TWO_STAGE,
            prior_icc=run_icc,
        )
        per_metric.append({"metric_version": mv, "metric": names.get(mv, str(mv)), **figures})
    # Least repeatable first: that is where a rubric needs attention.
    per_metric.sort(key=lambda m: m["unanimity"]["value"])
    return {
        "available": True,
        **overall,
        "n_excluded_incomplete": int((~full).sum()),
        "per_metric": per_metric,
        "per_metric_resamples": per_metric_resamples,
    }


def _per_metric_intervals(
    per_item: np.ndarray,
    groups: list[np.ndarray],
    base: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Two-stage (low, high) of unanimity and kappa per metric (``groups``: its items), as
    `statistics.two_stage_sum_distributions` gives them: the weights drawn once per shape
    (cluster sizes) and one product for all metrics of a shape, here without stacking every
    metric's distribution and splitting it again."""
    low, high = np.full((len(groups), 2), np.nan), np.full((len(groups), 2), np.nan)
    shapes: dict[tuple[int, ...], list[int]] = {}
    ordered = {}
    for i, idx in enumerate(groups):
        if idx.size >= 2:
            labels, codes = np.unique(base[idx], return_inverse=True)
            ordered[i] = per_item[idx[np.argsort(codes.ravel(), kind="stable")]]
            sizes = np.bincount(codes.ravel(), minlength=labels.size)
            shapes.setdefault(tuple(sizes.tolist()), []).append(i)
    if not ordered:
        return low, high
    width = per_item.shape[1]
    dist = np.empty((n_resamples, 2, len(groups)))
    for sizes, members in shapes.items():
        stacked = np.concatenate([ordered[i] for i in members], axis=1)
        every = len(members) == len(groups)
        row = 0
        for weights in two_stage_weights(sizes, n_resamples, seed):
            rows = weights.shape[0]
            sums = (weights @ stacked).reshape(rows, len(members), width)
            # Column by column (contiguous) rather than through strided views of each metric's.
            columns = np.ascontiguousarray(sums.transpose(2, 0, 1))
            out = dist[row : row + rows]
            if every:
                _repeatability_stat_columns(columns, out)
            else:
                part = np.empty((rows, 2, len(members)))
                _repeatability_stat_columns(columns, part)
                out[:, :, members] = part
            row += rows
    done = sorted(ordered)
    if len(done) < len(groups):
        dist = dist[:, :, done]
    bounds = percentile_interval(dist)
    low[done], high[done] = (b.T for b in bounds)
    return low, high


def _repeatability_stat_columns(columns: np.ndarray, out: np.ndarray) -> None:
    """`_repeatability_stat` of ``columns[j]``: the (rows, sets) sums of per-item column j,
    into ``out[:, 0]`` (unanimity) and ``out[:, 1]`` (kappa) -- `fleiss_from_sums` operation
    for operation with two categories (a sum of two is one addition), so the same figures."""
    unanimous, pair, items, present, absent = columns
    with np.errstate(all="ignore"):
        np.divide(unanimous, items, out=out[:, 0])
        p_obs = pair / items
        total = present + absent
        p_present, p_absent = present / total, absent / total
        p_exp = p_present * p_present
        p_exp += p_absent * p_absent
        kappa = out[:, 1]
        np.subtract(p_obs, p_exp, out=kappa)
        kappa /= 1.0 - p_exp
    kappa[(present == 0) | (absent == 0)] = np.nan
