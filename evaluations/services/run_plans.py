"""What a run covers (its metric versions and scenarios) and what launching it would cost."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion, Release, ReleaseItem
from rubrics.models import RubricCriterion

from ..models import EvaluationRun, RubricGrading, Scenario, SwapStudy
from .panel import run_panel
from .scenarios import age_contexts_for

# Rough sizes for the pre-launch estimate (tokens). Real figures are counted per call.
SIMULATOR_BRIEF_TOKENS = 900
SIMULATOR_REPLY_TOKENS = 80
USER_MESSAGE_TOKENS = 60
ASSISTANT_REPLY_TOKENS = 300
JUDGE_INSTRUCTIONS_TOKENS = 600
JUDGE_REPLY_TOKENS = 250
RUBRIC_ITEM_TOKENS = 400
RUBRIC_CRITERIA_TOKENS = 300
RUBRIC_GRADES_TOKENS = 400


def run_metric_versions(run: EvaluationRun) -> QuerySet[MetricVersion]:
    """The explicit choice of metric versions, else every version in the run's release."""
    if run.metric_versions.exists():
        return run.metric_versions.all()
    if run.release_id:
        return MetricVersion.objects.filter(release_items__release_id=run.release_id)
    return MetricVersion.objects.none()


def release_check_metric_versions(
    *, release: Release, metric_versions: Iterable[MetricVersion]
) -> None:
    """Refuse metric versions outside the release: a release's run is compared and published
    as that release, so it holds the release's versions only (a subset is fine)."""
    held = dict(
        ReleaseItem.objects.filter(release=release).values_list("metric_id", "metric_version_id")
    )
    outsiders = []
    for version in metric_versions:
        if held.get(version.metric_id) == version.pk:
            continue
        label = f"{version.metric.key} v{version.number} “{version.name}”"
        if version.metric_id in held:
            label += " (the release holds another version of it)"
        outsiders.append(label)
    if outsiders:
        raise ApplicationError(
            _(
                "Release %(release_version)s does not contain %(items)s. A "
                "release's run holds only the release's metric versions (a "
                "subset is fine); choose no release to run other metrics."
            )
            % {"release_version": release.version, "items": ", ".join(outsiders)}
        )


def _version_scenarios(run: EvaluationRun) -> QuerySet[Scenario]:
    return (
        Scenario.objects.active()
        .expanded()
        .runnable()
        .filter(metric_version__in=run_metric_versions(run))
    )


def run_scenarios_awaiting_translation_review(run: EvaluationRun) -> list[Scenario]:
    """The run's scenarios kept out because their machine translation is not reviewed yet."""
    return list(
        Scenario.objects.active()
        .awaiting_translation_review()
        .filter(metric_version__in=run_metric_versions(run))
        .select_related("metric_version__metric")
        .order_by("metric_version__metric__key", "base_index", "-age_context")
    )


def run_scenarios(run: EvaluationRun) -> QuerySet[Scenario]:
    """The scenarios the run simulates: its metric versions', or only the sample when the run
    is a swap study's re-run (`evaluations.services.swap`)."""
    scenarios = _version_scenarios(run)
    sample = SwapStudy.objects.filter(swap_run=run).values_list("scenario_ids", flat=True).first()
    return scenarios if sample is None else scenarios.filter(pk__in=sample)


@dataclass(frozen=True)
class RubricPlan:
    """What launching adds for the rubric items: replies, model calls, tokens and their price."""

    items: int = 0
    replies: int = 0  # items × targets
    target_calls: int = 0
    judge_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)


@dataclass(frozen=True)
class RunPlan:
    metric_versions: int
    scenarios: int
    versions_missing_scenarios: list[str]
    targets: int
    conversations: int
    simulator_calls: int
    target_calls: int
    judge_calls: int
    estimated_prompt_tokens: int
    estimated_completion_tokens: int
    estimated_cost: Decimal
    is_offline: bool
    # The rubric items' share; already counted in the calls, tokens and cost above.
    rubric: RubricPlan = field(default_factory=RubricPlan)
    # (metric key, metric version id) of each version lacking scenarios, for links to them.
    missing_scenario_links: tuple[tuple[str, int], ...] = ()

    @property
    def model_calls(self) -> int:
        # Target and judge calls include a reply and its grading calls per rubric response.
        return self.simulator_calls + self.target_calls + self.judge_calls

    @property
    def estimated_tokens(self) -> int:
        return self.estimated_prompt_tokens + self.estimated_completion_tokens


def rubric_plan(run: EvaluationRun, targets: list[ModelConfiguration]) -> RubricPlan:
    """One reply per item and target, and its grading calls: one per counted criterion
    (HealthBench) or one per item."""
    items = run.rubric_items.count()
    if not items:
        return RubricPlan()
    if run.rubric_grading == RubricGrading.PER_CRITERION:
        grading_calls = RubricCriterion.objects.counting().filter(item__runs=run).count()
    else:
        grading_calls = items
    prompt = completion = 0
    cost = Decimal(0)
    for target in targets:
        reply = min(ASSISTANT_REPLY_TOKENS, target.max_tokens or ASSISTANT_REPLY_TOKENS)
        for configuration, (p, c) in (
            (target, (RUBRIC_ITEM_TOKENS, reply)),
            (
                run.judge,
                (RUBRIC_ITEM_TOKENS + reply + RUBRIC_CRITERIA_TOKENS, RUBRIC_GRADES_TOKENS),
            ),
        ):
            prompt += p * items
            completion += c * items
            cost += configuration.cost_estimate(
                prompt_tokens=p * items, completion_tokens=c * items
            )
    return RubricPlan(
        items=items,
        replies=items * len(targets),
        target_calls=items * len(targets),
        judge_calls=grading_calls * len(targets),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost,
    )


def _conversation_token_estimate(turns: int, *, target_system_tokens: int, reply_tokens: int):
    """(simulator, target, judge) × (prompt, completion) tokens of one full conversation."""
    exchange = USER_MESSAGE_TOKENS + reply_tokens
    sim_prompt = sum(SIMULATOR_BRIEF_TOKENS + (k - 1) * exchange for k in range(1, turns + 1))
    target_prompt = sum(
        target_system_tokens + (k - 1) * exchange + USER_MESSAGE_TOKENS for k in range(1, turns + 1)
    )
    judge_prompt = JUDGE_INSTRUCTIONS_TOKENS + turns * exchange
    return (
        (sim_prompt, turns * SIMULATOR_REPLY_TOKENS),
        (target_prompt, turns * reply_tokens),
        (judge_prompt, JUDGE_REPLY_TOKENS),
    )


def run_plan(run: EvaluationRun) -> RunPlan:
    """What launching would cost: conversations, model calls, tokens and an estimated price.

    Assumes every conversation runs its full length (early stops only make it cheaper).
    """
    versions = list(run_metric_versions(run))
    scenario_counts: dict[int, int] = {}
    # Completeness is judged on the versions' whole sets, even when a swap study samples them.
    for version_id in _version_scenarios(run).values_list("metric_version_id", flat=True):
        scenario_counts[version_id] = scenario_counts.get(version_id, 0) + 1
    missing_versions = [
        version
        for version in MetricVersion.objects.filter(pk__in=[v.pk for v in versions])
        .select_related("metric")
        .order_by("metric__key")
        if scenario_counts.get(version.pk, 0) < 3 * len(age_contexts_for(version))
    ]
    missing = [version.metric.key for version in missing_versions]
    scenarios = run_scenarios(run).count()
    targets = list(run.targets.all())
    seats = run_panel(run)
    readings = sum(seat.repetitions for seat in seats)
    per_target = scenarios * run.replicates
    checker = run.fidelity_checker or run.judge
    prompt = completion = 0
    cost = Decimal(0)
    for target in targets:
        reply = min(ASSISTANT_REPLY_TOKENS, target.max_tokens or ASSISTANT_REPLY_TOKENS)
        sim, tgt, judge = _conversation_token_estimate(
            run.turns, target_system_tokens=len(target.system_prompt) // 4, reply_tokens=reply
        )
        # Each judge of the panel reads the conversation its own number of times.
        judging = [(s.judge, (judge[0] * s.repetitions, judge[1] * s.repetitions)) for s in seats]
        # The fidelity check reads the transcript once, about as a judge reading does.
        checking = (checker, judge)
        for configuration, (p, c) in ((run.simulator, sim), (target, tgt), *judging, checking):
            prompt += p * per_target
            completion += c * per_target
            cost += configuration.cost_estimate(
                prompt_tokens=p * per_target, completion_tokens=c * per_target
            )
    conversations = per_target * len(targets)
    rubric = rubric_plan(run, targets)
    prompt += rubric.prompt_tokens
    completion += rubric.completion_tokens
    cost += rubric.cost
    return RunPlan(
        metric_versions=len(versions),
        scenarios=scenarios,
        versions_missing_scenarios=missing,
        missing_scenario_links=tuple((v.metric.key, v.pk) for v in missing_versions),
        targets=len(targets),
        conversations=conversations,
        simulator_calls=conversations * run.turns,
        target_calls=conversations * run.turns + rubric.target_calls,
        # Judgments, one anchor and one fidelity check per conversation, and the rubric grading.
        judge_calls=conversations * (readings + 2) + rubric.judge_calls,
        estimated_prompt_tokens=prompt,
        estimated_completion_tokens=completion,
        estimated_cost=cost,
        is_offline=all(
            c.is_offline for c in [*targets, run.simulator, checker, *(s.judge for s in seats)]
        ),
        rubric=rubric,
    )
