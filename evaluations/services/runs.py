"""Evaluation runs: create, plan (calls, tokens, cost), launch, process, retry, cancel.

A run fans out its conversations in batches, one Celery task per batch (the batch engine).
Everything a task does is idempotent: conversations are unique per (run, scenario, target,
replicate), turns per index, judgments per repetition. A task delivered twice, or again after
its worker was killed (acks_late), finds the rows already written and continues from there.
The run is finished when no conversation is pending or running.
"""

import logging
import random
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion, Release

from ..models import (
    MAX_TURNS,
    Conversation,
    ConversationStatus,
    EvaluationRun,
    RubricCriterion,
    RubricGrading,
    RubricItem,
    RubricResponse,
    RunStatus,
    Scenario,
)
from .processing import (  # noqa: F401 - the run services' public names
    conversation_mark_failed,
    conversation_process,
    conversations_send,
    run_check_finished,
    run_process_inline,
)
from .scenarios import age_contexts_for

logger = logging.getLogger(__name__)

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
BULK_BATCH = 1000
UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


def run_metric_versions(run: EvaluationRun) -> QuerySet[MetricVersion]:
    """The explicit choice of metric versions, else every version in the run's release."""
    if run.metric_versions.exists():
        return run.metric_versions.all()
    if run.release_id:
        return MetricVersion.objects.filter(release_items__release_id=run.release_id)
    return MetricVersion.objects.none()


def run_scenarios(run: EvaluationRun) -> QuerySet[Scenario]:
    return Scenario.objects.active().expanded().filter(metric_version__in=run_metric_versions(run))


@transaction.atomic
def run_create(
    *,
    name: str,
    targets: list[ModelConfiguration],
    simulator: ModelConfiguration,
    judge: ModelConfiguration,
    release: Release | None = None,
    metric_versions: list[MetricVersion] | None = None,
    rubric_items: list[RubricItem] | None = None,
    turns: int = 8,
    replicates: int = 1,
    judgments_per_conversation: int = 3,
    typo_rate: float = 0.03,
    seed: int | None = None,
    use_anchors: bool = True,
    rubric_grading: str = RubricGrading.PER_CRITERION,
    created_by: AbstractBaseUser | None = None,
    spending_cap: Decimal | None = None,
) -> EvaluationRun:
    """A draft run; nothing is called until `run_launch`."""
    name = (name or "").strip()
    if not name:
        raise ApplicationError("Give the run a name, e.g. “Release 1.0 — three demo models”.")
    if not targets:
        raise ApplicationError("Choose at least one target model configuration.")
    if release is None and not metric_versions and not rubric_items:
        raise ApplicationError("Choose a release, some metric versions or some rubric items.")
    if not 1 <= turns <= MAX_TURNS:
        raise ApplicationError(f"Conversations last 1 to {MAX_TURNS} user turns, not {turns}.")
    if replicates < 1:
        raise ApplicationError("Simulate each scenario at least once (replicates ≥ 1).")
    if judgments_per_conversation < 1 or judgments_per_conversation % 2 == 0:
        raise ApplicationError(
            "Use an odd number of judgments per conversation (1, 3, 5…) so a majority decides."
        )
    if not 0.0 <= typo_rate <= 1.0:
        raise ApplicationError("The typo rate is a share between 0 and 1, e.g. 0.03.")
    if rubric_grading not in RubricGrading.values:
        raise ApplicationError(f"Grade rubrics {' or '.join(RubricGrading.values)}.")
    if spending_cap is not None and spending_cap <= 0:
        raise ApplicationError("A spending cap is a positive amount, e.g. 25.00.")
    inactive = [c.name for c in [*targets, simulator, judge] if not c.is_active]
    if inactive:
        raise ApplicationError(f"These model configurations are switched off: {inactive}.")
    run = EvaluationRun.objects.create(
        name=name[:200],
        release=release,
        simulator=simulator,
        judge=judge,
        turns=turns,
        replicates=replicates,
        judgments_per_conversation=judgments_per_conversation,
        typo_rate=typo_rate,
        use_anchors=use_anchors,
        rubric_grading=rubric_grading,
        # A fresh seed per run unless one is given, so a re-run is a new sample but reproducible.
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31 - 1),
        created_by=created_by,
        spending_cap=spending_cap,
    )
    run.targets.set(targets)
    if metric_versions:
        run.metric_versions.set(metric_versions)
    if rubric_items:
        run.rubric_items.set(rubric_items)
    return run


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


def _enqueue_dispatch(run: EvaluationRun) -> None:
    from ..tasks import run_dispatch

    transaction.on_commit(lambda: run_dispatch.delay(run.pk))


@transaction.atomic
def run_launch(*, run: EvaluationRun, dispatch: bool = True) -> EvaluationRun:
    """Start a draft run, or resume a running or paused one; safe to call again.

    Creates the missing conversations (unique keys make this a no-op for existing ones) and
    dispatches every unfinished conversation after commit — unless `dispatch` is false, for
    a caller that processes the run itself (`run_process_inline`).
    """
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status in (RunStatus.CANCELLED, RunStatus.COMPLETED, RunStatus.FAILED):
        raise ApplicationError(
            f"This run is {run.get_status_display().lower()}; create a new run to evaluate again "
            "(failed conversations of a finished run can be retried)."
        )
    plan = run_plan(run)
    if plan.versions_missing_scenarios:
        shown = ", ".join(plan.versions_missing_scenarios[:10])
        more = len(plan.versions_missing_scenarios) - 10
        raise ApplicationError(
            f"Generate scenarios first: {shown}{f' and {more} more' if more > 0 else ''} "
            "lack a complete set."
        )
    if plan.conversations == 0 and plan.rubric_responses == 0:
        raise ApplicationError("This run has no scenario to simulate and no rubric item.")
    capped = run.status == RunStatus.DRAFT and run.spending_cap is not None
    if capped and plan.estimated_cost > run.spending_cap:
        raise ApplicationError(
            f"The estimated cost, ${plan.estimated_cost:.2f}, exceeds this run's spending cap "
            f"of ${run.spending_cap:.2f}: raise the cap or choose fewer metrics or targets."
        )
    targets = list(run.targets.all())
    scenario_ids = list(run_scenarios(run).values_list("pk", flat=True))
    rows = (
        Conversation(
            run=run,
            scenario_id=scenario_id,
            target=target,
            replicate=replicate,
            is_offline=target.is_offline or run.simulator.is_offline or run.judge.is_offline,
        )
        for scenario_id in scenario_ids
        for target in targets
        for replicate in range(run.replicates)
    )
    Conversation.objects.bulk_create(rows, batch_size=BULK_BATCH, ignore_conflicts=True)
    RubricResponse.objects.bulk_create(
        (
            RubricResponse(run=run, item=item, target=target, is_offline=target.is_offline)
            for item in run.rubric_items.all()
            for target in targets
        ),
        batch_size=BULK_BATCH,
        ignore_conflicts=True,
    )
    counts = run.conversations.aggregate(
        total=Count("pk"),
        completed=Count("pk", filter=Q(status=ConversationStatus.COMPLETED)),
        failed=Count("pk", filter=Q(status=ConversationStatus.FAILED)),
    )
    run.conversations_total = counts["total"] or 0
    run.conversations_completed = counts["completed"] or 0
    run.conversations_failed = counts["failed"] or 0
    run.status = RunStatus.RUNNING
    run.started_at = run.started_at or timezone.now()
    run.finished_at = None
    run.halt_reason = ""  # resuming after a cap or a paused simulator/judge was fixed
    run.save()
    if dispatch:
        _enqueue_dispatch(run)
    return run


def run_dispatch(*, run_id: int) -> int:
    """Enqueue a processing task for every unfinished item of a running run.

    Items claimed live by a worker are skipped (a copy would only be refused); their
    `dispatched_at` tells the reaper when each was last handed to the broker.
    """
    from ..tasks import llm_process_rubric_response

    if not EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
        return 0
    now = timezone.now()
    live = Q(status=ConversationStatus.RUNNING, lease_expires_at__gt=now)
    count = 0
    for model, send in (
        (Conversation, conversations_send),
        (RubricResponse, lambda ids: [llm_process_rubric_response.delay(pk) for pk in ids]),
    ):
        waiting = model.objects.filter(run_id=run_id, status__in=UNFINISHED).exclude(live)
        ids = list(waiting.values_list("pk", flat=True))
        for start in range(0, len(ids), BULK_BATCH):
            chunk = ids[start : start + BULK_BATCH]
            model.objects.filter(pk__in=chunk).update(dispatched_at=now)
            send(chunk)
        count += len(ids)
    if count == 0:
        run_check_finished(run_id=run_id)
    return count


def run_set_spending_cap(*, run: EvaluationRun, cap: Decimal | None) -> EvaluationRun:
    """Set or lift the cap; a run paused at its cap resumes with `run_launch`."""
    if cap is not None and cap <= 0:
        raise ApplicationError("A spending cap is a positive amount, e.g. 25.00.")
    EvaluationRun.objects.filter(pk=run.pk).update(spending_cap=cap)
    run.refresh_from_db()
    return run


@transaction.atomic
def run_retry_failed(*, run: EvaluationRun, dispatch: bool = True) -> int:
    """Put failed conversations and rubric replies back in the queue (stored turns are kept).

    `dispatch` false: the caller processes the run itself (`run_process_inline`)."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status == RunStatus.CANCELLED:
        raise ApplicationError("This run was cancelled; create a new run instead.")
    failed = run.conversations.filter(status=ConversationStatus.FAILED)
    count = failed.update(status=ConversationStatus.PENDING, failure_kind="", finished_at=None)
    rubric_count = run.rubric_responses.filter(status=ConversationStatus.FAILED).update(
        status=ConversationStatus.PENDING
    )
    if count == 0 and rubric_count == 0:
        raise ApplicationError("No conversation of this run has failed.")
    run.conversations_failed = F("conversations_failed") - count
    run.status = RunStatus.RUNNING
    run.finished_at = None
    # Retrying is the maintainer saying the paused configurations are fixed.
    run.paused_configurations = {}
    run.halt_reason = ""
    run.save(
        update_fields=[
            "conversations_failed",
            "status",
            "finished_at",
            "paused_configurations",
            "halt_reason",
            "updated_at",
        ]
    )
    if dispatch:
        _enqueue_dispatch(run)
    return count + rubric_count


@transaction.atomic
def run_pause(*, run: EvaluationRun) -> EvaluationRun:
    """Stop handing out work; conversations in progress finish their current step."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status != RunStatus.RUNNING:
        raise ApplicationError("Only a running run can be paused.")
    run.status = RunStatus.PAUSED
    run.save(update_fields=["status", "updated_at"])
    return run


@transaction.atomic
def run_cancel(*, run: EvaluationRun) -> EvaluationRun:
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.is_finished:
        raise ApplicationError(f"This run is already {run.get_status_display().lower()}.")
    run.status = RunStatus.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "updated_at"])
    return run
