"""Regressions between two configurations on the same rubric items: the paired difference of
HealthBench scores overall, per behaviour dimension, acuity and population.

A configuration is a model configuration in a run (the same model with two system prompts or
safety settings, or two model versions; in one run or in two). Items are paired by key, and
each pair is scored on the criteria counted on both sides, so a change of rubric never shows as
a change of behaviour. Each figure is B's aggregate minus A's (each the clipped mean of item
scores, as published) with a paired bootstrap interval over items — the same resampled items
on both sides — from the platform's resampling engine. Intervals are Bonferroni-adjusted over
every figure of the comparison, so a difference flagged because its interval excludes zero
holds for all of them at once at the stated level.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.ids import is_identifier
from llm.models import ModelConfiguration
from rubrics.dimensions import DIMENSIONS, dimension_labels
from rubrics.models import Acuity, Population
from rubrics.scoring import item_score_or_none
from stats import sums_estimate
from stats.estimates import Estimate, Exclusion

from ..models import ConversationStatus, EvaluationRun, RubricResponse
from .rubric_scores import dimension_scores

RESAMPLES = 4000
# A percentile bootstrap over fewer items cannot hold its level: no interval, no flag.
MIN_ITEMS = 5
METHOD = "paired bootstrap over items, Bonferroni-adjusted over the comparison's figures"


@dataclass(frozen=True)
class Configuration:
    run: EvaluationRun
    target: ModelConfiguration

    @property
    def label(self) -> str:
        return f"{self.target.name} (run {self.run.pk})"


@dataclass(frozen=True)
class RegressionRow:
    section: str  # overall, dimension, acuity, population
    key: str
    label: str
    difference: Estimate  # B minus A
    a_mean: float | None
    b_mean: float | None

    @property
    def flagged(self) -> bool:
        d = self.difference
        return d.has_interval and (d.low > 0 or d.high < 0)  # type: ignore[operator]

    def as_record(self) -> dict:
        d = self.difference
        # Labels and reasons may be lazy translations (choice labels): records are plain text.
        return {
            "section": self.section,
            "key": self.key,
            "label": str(self.label),
            "a_score": self.a_mean,
            "b_score": self.b_mean,
            "difference": d.value,
            "low": d.low,
            "high": d.high,
            "confidence": d.confidence,
            "n_items": d.n,
            "flagged": self.flagged,
            "method": str(d.method) if d.method is not None else None,
            "reason": str(d.reason) if d.reason is not None else None,
        }


@dataclass(frozen=True)
class RubricRegression:
    a: Configuration
    b: Configuration
    rows: list[RegressionRow]
    paired_items: int
    excluded: tuple[Exclusion, ...]
    confidence: float


def _responses(config: Configuration) -> dict[str, RubricResponse]:
    responses = (
        RubricResponse.objects.filter(run=config.run, target=config.target)
        .select_related("item")
        .prefetch_related("grades__criterion")
    )
    return {r.item.key: r for r in responses}


def _score(grades) -> float | None:
    return item_score_or_none([g.criterion.points for g in grades], [g.met for g in grades])


def _clipped(values: np.ndarray) -> np.ndarray:
    return np.clip(values, 0.0, 1.0)


def _difference_of_aggregates(sums: np.ndarray) -> np.ndarray:
    """Columns: A's score sum, B's score sum, item count → B's clipped mean − A's."""
    with np.errstate(all="ignore"):
        n = sums[:, 2]
        return _clipped(sums[:, 1] / n) - _clipped(sums[:, 0] / n)


def rubric_configurations_compare(
    *, a: Configuration, b: Configuration, confidence: float = 0.95
) -> RubricRegression:
    """Paired differences (B − A) overall and per dimension, acuity and population."""
    if a == b:
        raise ApplicationError(_("Pick two different configurations to compare."))
    left, right = _responses(a), _responses(b)
    if not left or not right:
        raise ApplicationError(
            _(
                "Each configuration needs graded rubric replies in its run; "
                "%(a_label)s has %(a_count)s, %(b_label)s has %(b_count)s."
            )
            % {"a_label": a.label, "a_count": len(left), "b_label": b.label, "b_count": len(right)}
        )
    unpaired = len(set(left) ^ set(right))
    failed = 0
    groups: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    paired = 0
    for key in sorted(set(left) & set(right)):
        ra, rb = left[key], right[key]
        if ra.status != ConversationStatus.COMPLETED or rb.status != ConversationStatus.COMPLETED:
            failed += 1
            continue
        counted = set(ra.counted_criteria or []) & set(rb.counted_criteria or [])
        grades_a = [g for g in ra.grades.all() if g.criterion_id in counted]
        grades_b = [g for g in rb.grades.all() if g.criterion_id in counted]
        score_a = _score(grades_a)
        score_b = _score(grades_b)
        if score_a is None or score_b is None:
            continue
        paired += 1
        groups[("overall", "")].append((score_a, score_b))
        if ra.item.acuity:
            groups[("acuity", ra.item.acuity)].append((score_a, score_b))
        if ra.item.population:
            groups[("population", ra.item.population)].append((score_a, score_b))
        dims_a, dims_b = dimension_scores(grades_a), dimension_scores(grades_b)
        for dimension in sorted(set(dims_a) & set(dims_b)):
            groups[("dimension", dimension)].append((dims_a[dimension], dims_b[dimension]))
    excluded = tuple(
        e
        for e in (
            Exclusion("item graded for one configuration only", unpaired),
            Exclusion("reply failed or unfinished on either side", failed),
        )
        if e.count
    )
    order = (
        [("overall", "")]
        + [("dimension", slug) for slug, *_ in DIMENSIONS]
        + [("acuity", v) for v in Acuity.values]
        + [("population", v) for v in Population.values]
    )
    keys = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
    adjusted = 1 - (1 - confidence) / max(1, len(keys))
    labels = {
        "dimension": dimension_labels(),
        "acuity": dict(Acuity.choices),
        "population": dict(Population.choices),
    }
    rows = []
    for section, key in keys:
        pairs = np.array(groups[(section, key)], dtype=np.float64)
        sums = np.column_stack([pairs[:, 0], pairs[:, 1], np.ones(len(pairs))])
        difference = sums_estimate(
            sums,
            _difference_of_aggregates,
            unit="difference",
            over="items",
            n_resamples=RESAMPLES,
            confidence=adjusted,
            min_n=MIN_ITEMS,
            excluded=excluded,
        )
        rows.append(
            RegressionRow(
                section,
                key,
                "Overall" if section == "overall" else labels[section].get(key, key),
                replace(difference, method=METHOD),
                float(_clipped(pairs[:, 0].mean())),
                float(_clipped(pairs[:, 1].mean())),
            )
        )
    return RubricRegression(a, b, rows, paired, excluded, confidence)


REGRESSION_FIELDS = [
    "a",
    "b",
    "section",
    "key",
    "label",
    "a_score",
    "b_score",
    "difference",
    "low",
    "high",
    "confidence",
    "n_items",
    "flagged",
    "method",
    "reason",
]


def configuration_resolve(*, run_id: int | str, target: int | str) -> Configuration:
    """A run and one of its targets (by id or exact name), or an ApplicationError saying which
    part is missing."""
    run = EvaluationRun.objects.filter(pk=int(run_id)).first() if is_identifier(run_id) else None
    if run is None:
        raise ApplicationError(_("There is no run %(run_id)s.") % {"run_id": run_id})
    targets = run.targets.all()
    found = (
        targets.filter(pk=int(target)).first()
        if is_identifier(target)
        else targets.filter(name=str(target)).first()
    )
    if found is None:
        raise ApplicationError(
            _("Run %(run_id)s has no target %(target)r.") % {"run_id": run.pk, "target": target}
        )
    return Configuration(run=run, target=found)


def configuration_choices() -> list[tuple[str, str]]:
    """("run:target", label) of every configuration with graded rubric replies, newest first."""
    pairs = (
        RubricResponse.objects.values_list("run_id", "run__name", "target_id", "target__name")
        .distinct()
        .order_by("-run_id", "target__name")
    )
    return [
        (f"{run_id}:{target_id}", f"{target_name} — run {run_id} “{run_name}”")
        for run_id, run_name, target_id, target_name in pairs
    ]


def regression_records(regression: RubricRegression) -> list[dict]:
    """One record per figure, with both configurations named (for CSV and JSONL)."""
    return [
        {"a": regression.a.label, "b": regression.b.label, **row.as_record()}
        for row in regression.rows
    ]
