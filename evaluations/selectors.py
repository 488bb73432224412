"""Reads: scenarios per metric version, a release's demographic spread, run progress."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from core.languages import DEFAULT_LANGUAGE
from core.pagecache import latest
from llm.batches import batch_supported
from llm.models import ERROR_OUTCOMES, CallOutcome
from llm.selectors import RunBatches, llm_calls_of_run, run_batches_pending, run_call_totals
from metrics_registry.models import MetricVersion, Release

from .models import (
    SCENARIO_BASE_COUNT,
    Conversation,
    ConversationStatus,
    CrisisLine,
    EvaluationRun,
    FidelityCriterion,
    FidelityReading,
    Judgment,
    RubricResponse,
    RunJudge,
    Scenario,
)
from .services.scenarios import age_contexts_for

AGE_BANDS = ((13, 15), (16, 17), (18, 24), (25, 39), (40, 59), (60, 120))


def scenario_list(*, metric_version: MetricVersion, include_retired: bool = False):
    scenarios = Scenario.objects.filter(metric_version=metric_version).select_related("edited_by")
    if not include_retired:
        scenarios = scenarios.active()
    return scenarios.order_by("base_index", "-age_context", "-created_at")


def scenario_set_complete(*, metric_version: MetricVersion) -> bool:
    """Every (base situation × age context) slot has an active, fully written scenario in the
    default language (the set generation writes; other languages are variants of it)."""
    written = (
        Scenario.objects.active()
        .filter(metric_version=metric_version, expanded_at__isnull=False, language=DEFAULT_LANGUAGE)
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
class RunUsage:
    """A run's model usage, summed over the call log: every attempt, whatever became of it."""

    attempts: int = 0
    successes: int = 0
    failures: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    limit_wait_ms: int = 0
    rate_limited: int = 0
    backoff_ms: int = 0
    # Seconds until the latest backoff (a Retry-After, say) ends; 0 when nothing waits now.
    waiting_seconds: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def run_usage(*, run_id: int, work_item: str | None = None) -> RunUsage:
    """Attempts, successes, failures, cache hits, tokens and cost of the run's LLMCall rows.

    The whole run's figures come from its running totals (`llm.models.RunUsageTotal`), the
    same sums at a cost that does not grow with the run: the live page asks every few seconds.
    `work_item` ("conversation:17") narrows it to one item of the run, summed from its rows.
    """
    if work_item is None:
        totals = run_call_totals(run_id=run_id)
        # The same sums under the same names; only the backoff's end becomes seconds from now.
        sums = {
            f.name: getattr(totals, f.name) for f in fields(RunUsage) if hasattr(totals, f.name)
        }
        return RunUsage(**sums, waiting_seconds=_seconds_until(totals.latest_backoff_ends))
    calls = llm_calls_of_run(run_id=run_id, work_item=work_item)
    figures = calls.aggregate(
        attempts=Count("pk"),
        successes=Count("pk", filter=Q(outcome=CallOutcome.SUCCESS)),
        failures=Count("pk", filter=Q(outcome__in=ERROR_OUTCOMES)),
        cache_hits=Count("pk", filter=Q(outcome=CallOutcome.CACHED)),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        cost=Sum("cost_estimate"),
        waited=Sum("limit_wait_ms"),
        rate_limited=Count("pk", filter=Q(outcome=CallOutcome.RATE_LIMITED)),
        backoff=Sum("backoff_ms"),
    )
    ends = None
    if figures["backoff"]:
        latest = calls.filter(backoff_ms__gt=0).order_by("-id").values("created_at", "backoff_ms")
        latest = latest.first()
        if latest:
            ends = latest["created_at"] + timedelta(milliseconds=latest["backoff_ms"])
    return RunUsage(
        attempts=figures["attempts"] or 0,
        successes=figures["successes"] or 0,
        failures=figures["failures"] or 0,
        cache_hits=figures["cache_hits"] or 0,
        prompt_tokens=figures["prompt"] or 0,
        completion_tokens=figures["completion"] or 0,
        cost=figures["cost"] or Decimal(0),
        limit_wait_ms=figures["waited"] or 0,
        rate_limited=figures["rate_limited"] or 0,
        backoff_ms=figures["backoff"] or 0,
        waiting_seconds=_seconds_until(ends),
    )


def _seconds_until(moment: datetime | None) -> float:
    return max(0.0, (moment - timezone.now()).total_seconds()) if moment else 0.0


@dataclass(frozen=True)
class RubricCounts:
    total: int = 0
    completed: int = 0
    failed: int = 0


@dataclass(frozen=True)
class RunProgress:
    total: int
    completed: int
    failed: int
    remaining: int
    usage: RunUsage
    elapsed_seconds: float
    per_minute: float | None
    eta_seconds: float | None
    # The rubric replies' counts.
    rubric: RubricCounts = field(default_factory=RubricCounts)

    @property
    def percent(self) -> int:
        return int(100 * (self.completed + self.failed) / self.total) if self.total else 0

    @property
    def calls(self) -> int:
        return self.usage.attempts

    @property
    def tokens(self) -> int:
        return self.usage.tokens

    @property
    def cost(self) -> Decimal:
        return self.usage.cost


def rubric_counts(*, run_id: int) -> RubricCounts:
    counts = RubricResponse.objects.filter(run_id=run_id).aggregate(
        total=Count("pk"),
        completed=Count("pk", filter=Q(status=ConversationStatus.COMPLETED)),
        failed=Count("pk", filter=Q(status=ConversationStatus.FAILED)),
    )
    return RubricCounts(
        total=counts["total"] or 0,
        completed=counts["completed"] or 0,
        failed=counts["failed"] or 0,
    )


def run_progress(*, run: EvaluationRun) -> RunProgress:
    done = run.conversations_completed + run.conversations_failed
    end = run.finished_at or timezone.now()
    elapsed = (end - run.started_at).total_seconds() if run.started_at else 0.0
    per_minute = done / elapsed * 60 if elapsed > 0 and done else None
    remaining = run.conversations_remaining
    eta = remaining / per_minute * 60 if per_minute and not run.is_finished else None
    return RunProgress(
        total=run.conversations_total,
        completed=run.conversations_completed,
        failed=run.conversations_failed,
        remaining=remaining,
        usage=run_usage(run_id=run.pk),
        elapsed_seconds=elapsed,
        per_minute=per_minute,
        eta_seconds=eta,
        rubric=rubric_counts(run_id=run.pk),
    )


def scenarios_with_people() -> QuerySet[Scenario]:
    """Scenarios with their metric and who edited or retired them, for the scenario pages."""
    return Scenario.objects.select_related(
        "metric_version__metric", "edited_by", "retired_by", "translation_reviewed_by"
    )


def runs_for_list() -> QuerySet[EvaluationRun]:
    return EvaluationRun.objects.select_related("release").prefetch_related("targets")


def runs_for_detail() -> QuerySet[EvaluationRun]:
    return EvaluationRun.objects.select_related(
        "release", "simulator", "judge", "official_changed_by"
    )


def run_figures_stored(run: EvaluationRun) -> bool:
    """Whether the run's figures (summaries and analysis) are stored, so results pages can
    show it. Read through the reverse relation the results app declares on the run: this app
    stands below it and may not import it."""
    return EvaluationRun.objects.filter(pk=run.pk, analysis__isnull=False).exists()


def runs_of_releases() -> QuerySet[EvaluationRun]:
    """Runs of a release (those whose verdicts can be compared), newest first."""
    return EvaluationRun.objects.filter(release__isnull=False).order_by("-pk")


def run_failed_conversations(run: EvaluationRun) -> QuerySet[Conversation]:
    return run.conversations.filter(status=ConversationStatus.FAILED).select_related(
        "scenario__metric_version__metric", "target"
    )


def run_unverified_conversations(run: EvaluationRun) -> QuerySet[Conversation]:
    """Conversations some judge quoted evidence for that is not in the transcript."""
    return run.conversations.filter(unverified_evidence=True).select_related(
        "scenario__metric_version__metric", "target"
    )


def run_conversations_for_reading(run_id: int) -> QuerySet[Conversation]:
    """A run's conversations with what their page shows: turns, judge readings, coverage."""
    return (
        Conversation.objects.filter(run_id=run_id)
        .select_related(
            "run__judge", "scenario__metric_version__metric", "target", "fidelity__checker"
        )
        .prefetch_related("turns", "judgments", "anchor_coverage")
    )


def runs_use_offline_model(*runs: EvaluationRun) -> bool:
    """Whether any conversation of these runs was answered by the offline demo model."""
    return Conversation.objects.filter(run__in=runs, is_offline=True).exists()


def run_configuration_ids(run: EvaluationRun) -> set[int]:
    """Every model configuration whose name the run's results show: its targets, simulator,
    judges (the panel's too), fidelity checker, and any other that answered or judged in it."""
    ids = {run.simulator_id, run.judge_id, run.fidelity_checker_id}
    ids.update(run.targets.values_list("pk", flat=True))
    ids.update(RunJudge.objects.filter(run=run).values_list("judge_id", flat=True))
    ids.update(Conversation.objects.filter(run=run).values_list("target_id", flat=True).distinct())
    ids.update(
        Judgment.objects.filter(conversation__run=run).values_list("judge_id", flat=True).distinct()
    )
    ids.update(
        FidelityReading.objects.filter(conversation__run=run)
        .values_list("checker_id", flat=True)
        .distinct()
    )
    ids.update(run.rubric_responses.values_list("target_id", flat=True).distinct())
    return {pk for pk in ids if pk is not None}


def official_runs_stamp_sql() -> str:
    """The page cache's stamp part over official runs: which they are and when that changed."""
    table = EvaluationRun._meta.db_table
    return (
        f"(SELECT COUNT(*) || '.' || COALESCE(SUM(id), 0) || '.' || "  # noqa: S608
        f"{latest('official_changed_at')} FROM {table} WHERE is_official)"
    )


def run_failed_rubric_responses(run: EvaluationRun) -> QuerySet[RubricResponse]:
    """The run's failed rubric replies, with their item and target, for the run page."""
    failed = run.rubric_responses.filter(status=ConversationStatus.FAILED)
    return failed.select_related("item", "target").order_by("pk")


def conversation_fidelity(conversation: Conversation) -> dict[str, Any] | None:
    """The conversation's fidelity reading with each criterion labelled in the reader's
    language, or None when it has none (read through ``select_related("fidelity__checker")``
    to cost no query)."""
    try:
        reading = conversation.fidelity
    except FidelityReading.DoesNotExist:
        return None
    labels = {c.value: c.label for c in FidelityCriterion}
    return {
        "reading": reading,
        "criteria": [
            {**row, "label": labels.get(row.get("criterion"), row.get("criterion", ""))}
            for row in reading.criteria
            if isinstance(row, dict)
        ],
    }


def crisis_lines(country: str) -> QuerySet[CrisisLine]:
    """The crisis lines of a country (ISO 3166-1 alpha-2, any case), first-named first; none
    for a blank or unknown code."""
    return CrisisLine.objects.filter(country=(country or "").strip().upper())


# The attribute `scenarios_crisis_lines_load` keeps a scenario's lines in.
_LOADED_CRISIS_LINES = "_crisis_lines_loaded"
# The lines of each country last read for the engine, per process: the offline demo target
# names its user's line from inside the engine's event loop, where no query may run. Read
# again with every batch of conversations the engine loads, so an edit reaches it there.
_engine_crisis_lines: dict[str, list[CrisisLine]] = {}


def scenarios_crisis_lines_load(scenarios: Iterable[Scenario]) -> None:
    """Read the crisis lines of the scenarios' countries in one query and keep them on each
    scenario, so judging in the engine's event loop makes no query (`scenario_crisis_lines`)."""
    scenarios = list(scenarios)
    countries = {s.country for s in scenarios if s.country}
    by_country: dict[str, list[CrisisLine]] = {country: [] for country in countries}
    for line in CrisisLine.objects.filter(country__in=countries) if countries else []:
        by_country[line.country].append(line)
    _engine_crisis_lines.update(by_country)
    for scenario in scenarios:
        setattr(scenario, _LOADED_CRISIS_LINES, by_country.get(scenario.country, []))


def crisis_lines_preload(countries: Iterable[str]) -> None:
    """Read the lines of these countries in one query for the engine (`country_crisis_lines`),
    as the rubric replies' loader does for the countries their criteria are graded for."""
    codes = {c.strip().upper() for c in countries if c and c.strip()}
    by_country: dict[str, list[CrisisLine]] = {code: [] for code in codes}
    for line in CrisisLine.objects.filter(country__in=codes) if codes else []:
        by_country[line.country].append(line)
    _engine_crisis_lines.update(by_country)


def country_crisis_lines(country: str) -> list[CrisisLine]:
    """The crisis lines of a country: as last loaded for the engine, else read now."""
    code = (country or "").strip().upper()
    if code in _engine_crisis_lines:
        return _engine_crisis_lines[code]
    return list(crisis_lines(code))


def scenario_crisis_lines(scenario: Scenario) -> list[CrisisLine]:
    """The crisis lines of the scenario's country: those loaded with it, else read now."""
    loaded = getattr(scenario, _LOADED_CRISIS_LINES, None)
    return loaded if loaded is not None else list(crisis_lines(scenario.country))


def run_batch_roles(run: EvaluationRun) -> list[str]:
    """The roles of the run that go by batch ("judge", …), for its page; none off batch mode."""
    if not run.use_batch:
        return []
    judges = [run.judge, *(seat.judge for seat in run.panel_judges.select_related("judge"))]
    roles = []
    if any(j is not None and batch_supported(j) for j in judges):
        roles.append(_("judge (verdicts, anchor checks, rubric grading)"))
    checker = run.fidelity_checker or run.judge
    if checker is not None and batch_supported(checker):
        roles.append(_("fidelity checker"))
    return roles


def run_batches(run: EvaluationRun) -> RunBatches | None:
    """The run's requests not yet answered by a provider's batch (None off batch mode)."""
    return run_batches_pending(run_id=run.pk) if run.use_batch else None
