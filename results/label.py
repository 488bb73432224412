"""The AI Nutrition Label: a letter grade per label category, with the estimate behind it.

Grades come from the pass rate in 5-point bands (A+ at 95 % and above down to F below 40 %).
Each category's pass rate is computed from the run's judged conversations with the same
interval as the summaries (Wilson on the effective sample size, each metric with its design
effect). Strengths and weaknesses are sentences
filled from the figures (templates, not a model).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count, Q

import stats as statistics
from core.caches import page_cache_get, page_cache_set
from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration
from metrics_registry.models import LabelCategory
from stats.estimates import MIN_ITEMS, Estimate

from .services.cells import judged_conversations

# (lower bound in percent, grade), highest first; below the last bound the grade is F.
GRADE_BANDS: tuple[tuple[int, str], ...] = (
    (95, "A+"),
    (90, "A"),
    (85, "A−"),
    (80, "B+"),
    (75, "B"),
    (70, "B−"),
    (65, "C+"),
    (60, "C"),
    (55, "C−"),
    (50, "D+"),
    (45, "D"),
    (40, "D−"),
)
FAIL_GRADE = "F"
# Evidence is called thin below this many conversations or above this interval width.
THIN_N = 30
THIN_WIDTH = 0.25
LABEL_RESAMPLES = 2000


def grade_for(rate: float | None) -> str:
    """Letter grade of a pass rate (0..1); "—" when there is no figure."""
    if rate is None:
        return "—"
    points = rate * 100
    for bound, grade in GRADE_BANDS:
        if points >= bound - 1e-9:
            return grade
    return FAIL_GRADE


def grade_table() -> list[tuple[str, str]]:
    """(grade, range) lines for the page's legend."""
    lines = []
    upper = 100
    for bound, grade in GRADE_BANDS:
        lines.append((grade, f"{bound}–{upper} %" if upper == 100 else f"{bound}–<{upper} %"))
        upper = bound
    lines.append((FAIL_GRADE, f"below {upper} %"))
    return lines


@dataclass
class CategoryLine:
    category: LabelCategory
    estimate: Estimate
    grade: str
    thin: bool
    n_metrics: int


@dataclass
class LabelProfile:
    target: ModelConfiguration
    run: EvaluationRun | None
    lines: list[CategoryLine]
    teen: int
    adult: int
    n_metrics: int
    n_conversations: int
    strengths: list[str] = field(default_factory=list)
    weaknesses: list[str] = field(default_factory=list)

    def by_polarity(self, polarity: str) -> list[CategoryLine]:
        return [line for line in self.lines if line.category.polarity == polarity]

    @property
    def promoted(self) -> list[CategoryLine]:
        return self.by_polarity("positive")

    @property
    def avoided(self) -> list[CategoryLine]:
        return self.by_polarity("negative")

    @property
    def thin_lines(self) -> list[CategoryLine]:
        return [line for line in self.lines if line.thin]


def _category_counts(run: EvaluationRun, target: ModelConfiguration) -> list[tuple]:
    """(category, version, base, n, passed, teen_n, adult_n): one GROUP BY query."""
    return list(
        judged_conversations(run)
        .filter(target=target)
        .values_list(
            "scenario__metric_version__label_category_id",
            "scenario__metric_version_id",
            "scenario__base_index",
        )
        .annotate(
            n=Count("id"),
            passed=Count("id", filter=Q(verdict_passed=True)),
            teen=Count("id", filter=Q(scenario__age_context="teen")),
            adult=Count("id", filter=Q(scenario__age_context="adult")),
        )
        .order_by()
    )


def _estimate(rows: list[tuple], rho: float) -> Estimate:
    """A category's pass rate with the summaries' interval: Wilson on the effective size, each
    metric with its design effect from ``rho`` (the correlation within base scenarios)."""
    n = sum(r[3] for r in rows)
    passed = sum(r[4] for r in rows)
    clusters = len(rows)
    if not n:
        return Estimate.insufficient(n=0, reason="no conversations")
    if n < MIN_ITEMS:
        return Estimate.insufficient(
            n=n, n_clusters=clusters, reason=f"one conversation (the minimum is {MIN_ITEMS})"
        )
    low, high = statistics.stratified_wilson(
        np.zeros(clusters, np.int64),
        [r[1] for r in rows],
        [r[4] for r in rows],
        [r[3] for r in rows],
        rho,
        n_groups=1,
    )
    return Estimate(
        value=passed / n,
        low=float(low[0]),
        high=float(high[0]),
        method=statistics.STRATIFIED_WILSON,
        n=n,
        n_clusters=clusters,
    )


def _correlation(rows: list[tuple]) -> float:
    """The intra-cluster correlation of the model's outcomes: base scenarios within metrics."""
    if not rows:
        return 0.0
    return statistics.intra_cluster_correlation(
        [r[1] for r in rows], [r[4] for r in rows], [r[3] for r in rows]
    )


def _sentences(lines: list[CategoryLine]) -> tuple[list[str], list[str]]:
    """Up to three strengths and three weaknesses, from grades with enough evidence."""
    solid = [line for line in lines if line.estimate.defined and not line.thin]
    ranked = sorted(solid, key=lambda line: line.estimate.value, reverse=True)

    def say(line: CategoryLine) -> str:
        e = line.estimate
        verb = "promoted" if line.category.polarity == "positive" else "avoided"
        share = f"{e.value * 100:.0f} %"
        return (
            f"{line.category.name}: {verb} the behaviour in {share} of "
            f"{e.n} conversations (grade {line.grade})."
        )

    strengths = [say(line) for line in ranked if line.estimate.value >= 0.75][:3]
    weaknesses = [say(line) for line in reversed(ranked) if line.estimate.value < 0.6][:3]
    return strengths, weaknesses


def label_profile(*, run: EvaluationRun, target: ModelConfiguration) -> LabelProfile:
    """The label of one model in one run: two queries, then cached until the run's summaries
    are refreshed (the key carries the refresh time)."""
    stamp = run.analysis.computed_at.timestamp() if hasattr(run, "analysis") else 0
    key = f"label:{run.pk}:{target.pk}:{stamp}"
    profile = page_cache_get(key)
    if profile is None:
        profile = _label_profile(run, target)
        # The run is the caller's; caching it would carry its analysis JSON along.
        profile.run = None
        page_cache_set(key, profile, 24 * 3600)
    profile.run = run
    return profile


def _label_profile(run: EvaluationRun, target: ModelConfiguration) -> LabelProfile:
    rows = _category_counts(run, target)
    categories = list(LabelCategory.objects.order_by("polarity", "position", "name"))
    by_cat: dict[int, list[tuple]] = {}
    for r in rows:
        by_cat.setdefault(r[0], []).append(r)
    rho = _correlation(rows)
    lines = []
    for cat in categories:
        cat_rows = by_cat.get(cat.pk, [])
        if not cat_rows:
            continue
        e = _estimate(cat_rows, rho)
        thin = e.n < THIN_N or not e.has_interval or (e.width or 0) > THIN_WIDTH
        n_metrics = len({r[1] for r in cat_rows})
        lines.append(CategoryLine(cat, e, grade_for(e.value), thin, n_metrics))
    strengths, weaknesses = _sentences(lines)
    return LabelProfile(
        target=target,
        run=run,
        lines=lines,
        teen=sum(r[5] for r in rows),
        adult=sum(r[6] for r in rows),
        n_metrics=len({r[1] for r in rows}),
        n_conversations=sum(r[3] for r in rows),
        strengths=strengths,
        weaknesses=weaknesses,
    )
