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
from django.utils.translation import gettext_noop

import stats as statistics
from core.caches import page_cache_get, page_cache_set
from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration
from metrics_registry.models import LabelCategory, MetricVersion, ReleaseItem
from metrics_registry.text_selectors import ShownText, metric_version_texts
from stats.estimates import MIN_ITEMS, Estimate

from . import grades
from .grades import grade_for, grade_words, plausibly
from .models import SummaryLevel
from .selectors import summary_estimates
from .services.cells import judged_conversations

# Evidence is called thin below this many conversations or above this interval width.
THIN_N = 30
THIN_WIDTH = 0.25
# A category the model does well in (a strength) from this pass rate, badly in (a weakness)
# below that one; a thin category is neither, wherever the label is read (`standing`).
DOES_WELL_FROM = 0.75
DOES_BADLY_BELOW = 0.6
LABEL_RESAMPLES = 2000
# Which personas a label shows: ``?age=`` on the label, the comparison and the downloads.
LABEL_AGES = ("all", "teen", "adult")
AGE_WORDS = {
    "all": "teen and adult personas",
    "teen": "teen personas (13–17) only",
    "adult": "adult personas (18+) only",
}


def label_age(value: str | None) -> str:
    """The population asked for, "all" for anything else."""
    return value if value in LABEL_AGES else "all"


@dataclass
class CategoryLine:
    category: LabelCategory
    estimate: Estimate
    grade: str
    thin: bool
    n_metrics: int

    @property
    def grade_range(self) -> tuple[str, str] | None:
        """The grades of the interval's ends when they differ from each other (the figure's
        uncertainty spans bands), else None."""
        ends = grades.grade_range(self.estimate)
        return ends if ends and ends[0] != ends[1] else None

    @property
    def sureness(self) -> str:
        """How sure the grade is, in words: "plausibly C to B" or "grade C either way"."""
        return grade_words(self.estimate)

    @property
    def standing(self) -> str:
        """ "well", "badly" or "middle" by the pass rate; "thin" where the label marks the
        evidence thin (so it is offered neither as a strength nor as a weakness, on the label
        or in any reading of it); "" without a figure."""
        e = self.estimate
        if not e.defined:
            return ""
        if self.thin:
            return "thin"
        if e.value >= DOES_WELL_FROM:
            return "well"
        return "badly" if e.value < DOES_BADLY_BELOW else "middle"

    @property
    def grade_text(self) -> str:
        """ "B, plausibly B− to A−" when the interval spans bands, else the grade alone."""
        spread = self.grade_range
        return f"{self.grade}, {plausibly(*spread)}" if spread else self.grade


@dataclass
class LabelProfile:
    target: ModelConfiguration
    run: EvaluationRun | None
    lines: list[CategoryLine]
    teen: int
    adult: int
    n_metrics: int
    n_conversations: int
    age: str = "all"
    strengths: list[str] = field(default_factory=list)
    # Blank: every language pooled; a tag: that language's conversations alone.
    language: str = ""
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
    def population(self) -> str:
        return AGE_WORDS[self.age]

    @property
    def thin_lines(self) -> list[CategoryLine]:
        return [line for line in self.lines if line.thin]


def _category_counts(
    run: EvaluationRun, target: ModelConfiguration, age: str, language: str = ""
) -> list[tuple]:
    """(category, version, base, n, passed, teen_n, adult_n): one GROUP BY query; over one
    language's conversations when ``language`` names one."""
    conversations = judged_conversations(run).filter(target=target)
    if age != "all":
        conversations = conversations.filter(scenario__age_context=age)
    if language:
        conversations = conversations.filter(scenario__language=language)
    return list(
        conversations.values_list(
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
        return Estimate.insufficient(n=0, reason=gettext_noop("no conversations"))
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
    solid = [line for line in lines if line.standing in ("well", "badly", "middle")]
    ranked = sorted(solid, key=lambda line: line.estimate.value, reverse=True)

    def say(line: CategoryLine) -> str:
        e = line.estimate
        verb = "promoted" if line.category.polarity == "positive" else "avoided"
        share = f"{e.value * 100:.0f} %"
        return (
            f"{line.category.name}: {verb} the behaviour in {share} of "
            f"{e.n} conversations (grade {line.grade})."
        )

    strengths = [say(line) for line in ranked if line.standing == "well"][:3]
    weaknesses = [say(line) for line in reversed(ranked) if line.standing == "badly"][:3]
    return strengths, weaknesses


def label_profile(
    *, run: EvaluationRun, target: ModelConfiguration, age: str = "all", language: str = ""
) -> LabelProfile:
    """The label of one model in one run for one population (`LABEL_AGES`), over every
    language or one (``language``): two queries, then cached until the run's summaries are
    refreshed (the key carries the refresh time)."""
    age = label_age(age)
    stamp = run.analysis.computed_at.timestamp() if hasattr(run, "analysis") else 0
    key = f"label:{run.pk}:{target.pk}:{age}:{language}:{stamp}"
    profile = page_cache_get(key)
    if profile is None:
        profile = _label_profile(run, target, age, language)
        # The run is the caller's; caching it would carry its analysis JSON along.
        profile.run = None
        page_cache_set(key, profile, 24 * 3600)
    profile.run = run
    return profile


def _label_profile(
    run: EvaluationRun, target: ModelConfiguration, age: str = "all", language: str = ""
) -> LabelProfile:
    rows = _category_counts(run, target, age, language)
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
        age=age,
        strengths=strengths,
        weaknesses=weaknesses,
        language=language,
    )


@dataclass
class CategoryMetric:
    """A metric behind a label category: this model's pass rate, both populations and apart."""

    version: MetricVersion
    all: Estimate | None
    teen: Estimate | None
    adult: Estimate | None
    # The version's name as the reader is shown it (their language, or the original).
    shown: ShownText | None = None

    def for_age(self, age: str) -> Estimate | None:
        return getattr(self, age)


def label_category_metrics(
    *,
    run: EvaluationRun,
    target: ModelConfiguration,
    category: LabelCategory,
    language: str = "",
) -> list[CategoryMetric]:
    """The metrics of the run's release in `category`, with the model's summarised pass rates
    (the same rows as the metric pages), each named in the reader's language when it can be.
    Three queries."""
    versions = [
        item.metric_version
        for item in ReleaseItem.objects.filter(
            release_id=run.release_id, metric_version__label_category=category
        )
        .select_related("metric_version__metric")
        .order_by("metric__key")
    ]
    est = summary_estimates(
        run=run,
        level=SummaryLevel.METRIC,
        ages=LABEL_AGES,
        target_ids=[target.pk],
        key_ids=[v.pk for v in versions],
        language=language,
    )
    shown = metric_version_texts(versions)
    return [
        CategoryMetric(
            v, *(est.get((target.pk, v.polarity, v.pk, age)) for age in LABEL_AGES), shown[v.pk]
        )
        for v in versions
    ]
