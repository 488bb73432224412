"""Judge trust cell by cell: each grouping's cells digested from the blind verdicts they read,
and only the stale ones drawn again.

The cells are those of `judge_trust.run_judge_trust`: the whole run, each metric, target,
metric x target, label category and category x target. A cell's figures are those
``stats.judge_trust`` gives its rows alone (`stats.judge_trust_by` guarantees it), and its rows
are read in one order (conversation, then rater), so its digest (its rows' base scenario,
judge and expert verdicts, and the resamples) decides its figures. The documents pages read
(`judge_trust.JUDGE_TRUST`) are assembled from the cells; a refresh rebuilds only the
documents holding a stale cell, or every one when the stored documents were discarded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import BigIntegerField, Case, Value, When
from numpy.typing import NDArray

from evaluations.models import Conversation, EvaluationRun
from metrics_registry.models import MetricVersion
from review.selectors import blind_verdict_ratings
from stats.judge_trust import CONTESTED, judge_trust_by
from stats.judge_trust_intervals import agreement_icc

from .cells import bigint_array
from .figure_cells import input_digest

GROUPINGS = ("all", "metric", "target", "metric_target", "category", "category_target")
# A verdict as a code in digests: false, true, none.
_CODES = {False: 0, True: 1, None: 2}


@dataclass(frozen=True)
class BlindRows:
    """The run's current blind expert verdicts with the judge's, one row per rating, in
    (conversation, rater) order; the cell keys of each row by grouping."""

    metric: list[str]
    target: NDArray[np.int64]
    category: list[str]
    version: NDArray[np.int64]
    base: NDArray[np.int64]
    judge: NDArray[np.int64]  # _CODES
    expert: NDArray[np.int64]

    @property
    def size(self) -> int:
        return int(self.target.size)


def blind_rows(run: EvaluationRun) -> BlindRows:
    """Two queries: the ratings (`review.selectors.blind_verdict_ratings`) and the run's
    conversations with their scenario as one array (no list of ids to send), then the metric
    versions."""
    ratings = blind_verdict_ratings(run=run)
    present = Case(
        When(verdict_present=True, then=Value(1)),
        When(verdict_present=False, then=Value(0)),
        default=Value(2),
        output_field=BigIntegerField(),
    )
    info = bigint_array(
        Conversation.objects.filter(run=run)
        .annotate(judge=present)
        .values_list(
            "pk", "target_id", "scenario__metric_version_id", "scenario__base_index", "judge"
        )
        .order_by("pk"),
        width=5,
    )
    rated = np.fromiter((c for c, _, _ in ratings), np.int64, len(ratings))
    expert = np.fromiter((_CODES[v] for _, _, v in ratings), np.int64, len(ratings))
    at = np.searchsorted(info[:, 0], rated) if info.size else np.zeros(0, np.intp)
    found = at < info.shape[0]
    found[found] &= info[at[found], 0] == rated[found]
    info, expert = info[at[found]], expert[found]
    versions = np.unique(info[:, 2]).tolist()
    meta = dict.fromkeys(versions, ("", ""))
    for pk, key, slug in MetricVersion.objects.filter(pk__in=versions).values_list(
        "pk", "metric__key", "label_category__slug"
    ):
        meta[pk] = (key, slug or "")
    by_version = [meta[v] for v in info[:, 2].tolist()]
    return BlindRows(
        metric=[key for key, _ in by_version],
        target=info[:, 1],
        category=[slug for _, slug in by_version],
        version=info[:, 2],
        base=info[:, 3],
        judge=info[:, 4],
        expert=expert,
    )


def cell_key(grouping: str, label: Any) -> str:
    """A cell's key: its grouping and its label (a metric key, a target id, a pair)."""
    parts = list(label) if isinstance(label, tuple) else [] if grouping == "all" else [label]
    return json.dumps([grouping, *parts], separators=(",", ":"))


def cell_label(key: str) -> tuple[str, Any]:
    grouping, *parts = json.loads(key)
    if grouping == "all":
        return grouping, "all"
    return grouping, tuple(parts) if len(parts) > 1 else parts[0]


def _codes(values: list[Any]) -> tuple[NDArray[np.int64], list[Any]]:
    """Each value's index among the distinct values, and those values."""
    names, codes = np.unique(np.asarray(values, dtype=object), return_inverse=True)
    return codes.astype(np.int64), names.tolist()


def _groupings(rows: BlindRows) -> dict[str, tuple[NDArray[np.int64], Callable[[int], Any]]]:
    """Each grouping's cell code of every row, and the label of a code."""
    metric, metrics = _codes(rows.metric)
    category, categories = _codes(rows.category)
    target = rows.target
    span = int(target.max()) + 1 if rows.size else 1
    return {
        "all": (np.zeros(rows.size, np.int64), lambda code: "all"),
        "metric": (metric, lambda code: metrics[code]),
        "target": (target, int),
        "metric_target": (
            metric * span + target,
            lambda code: (metrics[code // span], code % span),
        ),
        "category": (category, lambda code: categories[code]),
        "category_target": (
            category * span + target,
            lambda code: (categories[code // span], code % span),
        ),
    }


def release_icc(rows: BlindRows) -> float:
    """The intra-cluster correlation of judge-expert agreement over base scenarios, pooled over
    the run's metric x target cells (`stats.judge_trust.agreement_icc`), rounded to 0.01: each
    cell's design effect leans on it, and one more verdict rarely moves it by that much, so
    it rarely redraws every stored cell."""
    if not rows.size:
        return 0.0
    cells = _groupings(rows)["metric_target"][0]
    clusters = rows.version * (int(rows.base.max()) + 1) + rows.base
    icc = agreement_icc(cells, verdicts(rows.judge), verdicts(rows.expert), clusters)
    return round(icc, 2)


def cells_of(
    rows: BlindRows, *, resamples: int, synthetic: bool, icc: float = 0.0, digested: bool = True
) -> tuple[dict[str, NDArray[np.intp]], dict[str, str]]:
    """Every cell's rows (indices in reading order) and digest (its rows' base scenarios and
    verdicts, and what its figures are drawn with: resamples and the release's ``icc``), by
    cell key; no digest unless ``digested`` (the figures computed live)."""
    members: dict[str, NDArray[np.intp]] = {}
    digests: dict[str, str] = {}
    if not rows.size:
        return members, digests
    record = np.stack([rows.version, rows.base, rows.judge, rows.expert], 1)
    drawn = input_digest(resamples, synthetic, icc).encode()  # bytes: no JSON per cell
    for grouping, (code, label) in _groupings(rows).items():
        order = np.argsort(code, kind="stable")
        ordered = np.ascontiguousarray(record[order])
        starts = np.flatnonzero(np.r_[True, np.diff(code[order]) != 0]).tolist()
        for start, end in zip(starts, [*starts[1:], rows.size], strict=True):
            key = cell_key(grouping, label(int(code[order[start]])))
            members[key] = order[start:end]
            if digested:
                digests[key] = input_digest(ordered[start:end].tobytes(), drawn)
    return members, digests


def cells_compute(
    rows: BlindRows,
    members: dict[str, NDArray[np.intp]],
    keys: set[str],
    *,
    resamples: int,
    icc: float,
    cell: Callable[[Any], dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The figures of the cells ``keys`` in one batch (`stats.judge_trust_by`, each cell's
    design effect leaning on the release's ``icc``), each through ``cell`` (the stored form of
    a ``Trust``)."""
    ordered = sorted(keys)
    if not ordered:
        return {}
    index = np.concatenate([members[key] for key in ordered])
    labels = np.repeat(np.arange(len(ordered)), [members[key].size for key in ordered])
    clusters = [f"{v}:{b}" for v, b in zip(rows.version[index], rows.base[index], strict=True)]
    trusts = judge_trust_by(
        labels.tolist(),
        verdicts(rows.judge[index]),
        verdicts(rows.expert[index]),
        clusters,
        icc=icc,
        n_resamples=resamples,
    )
    return {ordered[label]: cell(trust) for label, trust in trusts.items()}


def verdicts(codes: NDArray[np.int64]) -> NDArray[np.float64]:
    return np.where(codes == 2, np.nan, codes.astype(np.float64))


def is_low(figures: dict[str, Any] | None) -> bool:
    return figures is not None and figures.get("badge") == CONTESTED
