"""Reads: scenarios per metric version, a release's demographic spread, run progress."""

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone

from metrics_registry.models import MetricVersion, Release

from .models import EvaluationRun, Scenario
from .services.rubric_runs import rubric_counts, rubric_usage

AGE_BANDS = ((13, 15), (16, 17), (18, 24), (25, 39), (40, 59), (60, 120))


def scenario_list(*, metric_version: MetricVersion, include_retired: bool = False):
    scenarios = Scenario.objects.filter(metric_version=metric_version).select_related("edited_by")
    if not include_retired:
        scenarios = scenarios.active()
    return scenarios.order_by("base_index", "-age_context", "-created_at")


def scenario_set_complete(*, metric_version: MetricVersion) -> bool:
    """Every (base situation × age context) slot has an active, fully written scenario."""
    from .models import SCENARIO_BASE_COUNT
    from .services.scenarios import age_contexts_for

    written = (
        Scenario.objects.active()
        .filter(metric_version=metric_version, expanded_at__isnull=False)
        .values_list("base_index", "age_context")
        .distinct()
        .count()
    )
    return written >= SCENARIO_BASE_COUNT * len(age_contexts_for(metric_version))


def metric_versions_with_scenarios() -> QuerySet[MetricVersion]:
    """Current metric versions with their number of active scenarios, for the index."""
    return (
        MetricVersion.objects.filter(metric__current_version=F("pk"))
        .select_related("metric")
        .annotate(active_scenarios=Count("scenarios", filter=Q(scenarios__status="active")))
        .order_by("metric__key")
    )


@dataclass
class Demographics:
    scenarios: int = 0
    age_contexts: Counter = field(default_factory=Counter)
    age_bands: Counter = field(default_factory=Counter)
    genders: Counter = field(default_factory=Counter)
    backgrounds: Counter = field(default_factory=Counter)


def _band(age: object) -> str:
    if not isinstance(age, int):
        return "unknown"
    for low, high in AGE_BANDS:
        if low <= age <= high:
            return f"{low}–{high}" if high < 120 else f"{low}+"
    return "unknown"


def release_demographics(*, release: Release) -> Demographics:
    """Counts of age, gender and background over the active scenarios of a release."""
    rows = (
        Scenario.objects.active()
        .filter(metric_version__release_items__release=release)
        .values_list("persona", "age_context")
    )
    spread = Demographics()
    for persona, age_context in rows:
        persona = persona or {}
        spread.scenarios += 1
        spread.age_contexts[age_context] += 1
        spread.age_bands[_band(persona.get("age"))] += 1
        spread.genders[str(persona.get("gender") or "unknown").strip().casefold()] += 1
        spread.backgrounds[str(persona.get("background") or "unknown").strip()] += 1
    return spread


@dataclass(frozen=True)
class RunProgress:
    total: int
    completed: int
    failed: int
    remaining: int
    calls: int
    tokens: int
    cost: Decimal
    elapsed_seconds: float
    per_minute: float | None
    eta_seconds: float | None
    rubric_total: int = 0
    rubric_completed: int = 0
    rubric_failed: int = 0

    @property
    def percent(self) -> int:
        return int(100 * (self.completed + self.failed) / self.total) if self.total else 0


def run_progress(*, run: EvaluationRun) -> RunProgress:
    usage = run.conversations.aggregate(
        calls=Sum("calls"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        cost=Sum("cost"),
    )
    done = run.conversations_completed + run.conversations_failed
    end = run.finished_at or timezone.now()
    elapsed = (end - run.started_at).total_seconds() if run.started_at else 0.0
    per_minute = done / elapsed * 60 if elapsed > 0 and done else None
    remaining = run.conversations_remaining
    rubric = rubric_counts(run.pk)
    # Rubric-only runs made real calls too; they count in the run's totals.
    rubric_spent = rubric_usage(run.pk) if rubric["total"] else None
    eta = remaining / per_minute * 60 if per_minute and not run.is_finished else None
    return RunProgress(
        total=run.conversations_total,
        completed=run.conversations_completed,
        failed=run.conversations_failed,
        remaining=remaining,
        calls=(usage["calls"] or 0) + (rubric_spent["calls"] if rubric_spent else 0),
        tokens=(usage["prompt"] or 0)
        + (usage["completion"] or 0)
        + (rubric_spent["tokens"] if rubric_spent else 0),
        cost=(usage["cost"] or Decimal(0)) + (rubric_spent["cost"] if rubric_spent else 0),
        elapsed_seconds=elapsed,
        per_minute=per_minute,
        eta_seconds=eta,
        rubric_total=rubric["total"] or 0,
        rubric_completed=rubric["completed"] or 0,
        rubric_failed=rubric["failed"] or 0,
    )
