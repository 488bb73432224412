"""What a run covers (its metric versions and scenarios) and what launching it would cost."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import QuerySet

from metrics_registry.models import MetricVersion

from ..models import EvaluationRun, RubricCriterion, RubricGrading, Scenario
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


def run_scenarios(run: EvaluationRun) -> QuerySet[Scenario]:
    return Scenario.objects.active().expanded().filter(metric_version__in=run_metric_versions(run))


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
    rubric_items: int = 0
    rubric_responses: int = 0
    # (metric key, metric version id) of each version lacking scenarios, for links to them.
    missing_scenario_links: tuple[tuple[str, int], ...] = ()

    @property
    def model_calls(self) -> int:
        # Target and judge calls include one reply and one grading call per rubric response.
        return self.simulator_calls + self.target_calls + self.judge_calls

    @property
    def estimated_tokens(self) -> int:
        return self.estimated_prompt_tokens + self.estimated_completion_tokens


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
    for version_id in run_scenarios(run).values_list("metric_version_id", flat=True):
        scenario_counts[version_id] = scenario_counts.get(version_id, 0) + 1
    missing_versions = [
        version
        for version in MetricVersion.objects.filter(pk__in=[v.pk for v in versions])
        .select_related("metric")
        .order_by("metric__key")
        if scenario_counts.get(version.pk, 0) < 3 * len(age_contexts_for(version))
    ]
    missing = [version.metric.key for version in missing_versions]
    scenarios = sum(scenario_counts.values())
    targets = list(run.targets.all())
    per_target = scenarios * run.replicates
    prompt = completion = 0
    cost = Decimal(0)
    for target in targets:
        reply = min(ASSISTANT_REPLY_TOKENS, target.max_tokens or ASSISTANT_REPLY_TOKENS)
        sim, tgt, judge = _conversation_token_estimate(
            run.turns, target_system_tokens=len(target.system_prompt) // 4, reply_tokens=reply
        )
        judge = (
            judge[0] * run.judgments_per_conversation,
            judge[1] * run.judgments_per_conversation,
        )
        for configuration, (p, c) in ((run.simulator, sim), (target, tgt), (run.judge, judge)):
            prompt += p * per_target
            completion += c * per_target
            cost += configuration.cost_estimate(
                prompt_tokens=p * per_target, completion_tokens=c * per_target
            )
    conversations = per_target * len(targets)
    rubric_items = run.rubric_items.count()
    rubric_responses = rubric_items * len(targets)
    # Grader calls per target: one per counted criterion (HealthBench) or one per item.
    if run.rubric_grading == RubricGrading.PER_CRITERION:
        grading_calls = RubricCriterion.objects.counting().filter(item__runs=run).count()
    else:
        grading_calls = rubric_items
    for target in targets:
        reply = min(ASSISTANT_REPLY_TOKENS, target.max_tokens or ASSISTANT_REPLY_TOKENS)
        for configuration, (p, c) in (
            (target, (RUBRIC_ITEM_TOKENS, reply)),
            (
                run.judge,
                (RUBRIC_ITEM_TOKENS + reply + RUBRIC_CRITERIA_TOKENS, RUBRIC_GRADES_TOKENS),
            ),
        ):
            prompt += p * rubric_items
            completion += c * rubric_items
            cost += configuration.cost_estimate(
                prompt_tokens=p * rubric_items, completion_tokens=c * rubric_items
            )
    return RunPlan(
        metric_versions=len(versions),
        scenarios=scenarios,
        versions_missing_scenarios=missing,
        missing_scenario_links=tuple((v.metric.key, v.pk) for v in missing_versions),
        targets=len(targets),
        conversations=conversations,
        simulator_calls=conversations * run.turns,
        target_calls=conversations * run.turns + rubric_responses,
        # Judgments, one anchor check per conversation, and the rubric grading calls.
        judge_calls=conversations * (run.judgments_per_conversation + 1)
        + grading_calls * len(targets),
        estimated_prompt_tokens=prompt,
        estimated_completion_tokens=completion,
        estimated_cost=cost,
        is_offline=all(c.is_offline for c in [*targets, run.simulator, run.judge]),
        rubric_items=rubric_items,
        rubric_responses=rubric_responses,
    )
