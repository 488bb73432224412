"""Evaluation runs: create, plan (`run_plans`), launch, process (`processing`), retry, cancel.

A run fans out its conversations in batches, one Celery task per batch (the batch engine).
Everything a task does is idempotent: conversations are unique per (run, scenario, target,
replicate), turns per index, judgments per repetition. A task delivered twice, or again after
its worker was killed (acks_late), finds the rows already written and continues from there.
The run is finished when no conversation is pending or running.
"""

import logging
import random
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.exceptions import ApplicationError
from core.queueing import task_send
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion, Release
from rubrics.models import RubricItem

from ..models import (
    MAX_TURNS,
    Conversation,
    ConversationStatus,
    EvaluationRun,
    RubricGrading,
    RunStatus,
    TranscriptImport,
)
from .estimates import run_estimate
from .failures import conversation_mark_failed  # noqa: F401 - the run services' public names
from .panel import panel_configure
from .processing import (  # noqa: F401 - the run services' public names
    WORK_ITEMS,
    conversation_process,
    conversations_send,
    run_check_finished,
    run_process_inline,
)
from .rubric_runs import rubric_responses_create, rubric_responses_retry_failed
from .run_plans import (  # noqa: F401 - the run services' public names
    ASSISTANT_REPLY_TOKENS,
    JUDGE_INSTRUCTIONS_TOKENS,
    JUDGE_REPLY_TOKENS,
    SIMULATOR_BRIEF_TOKENS,
    SIMULATOR_REPLY_TOKENS,
    USER_MESSAGE_TOKENS,
    RunPlan,
    release_check_metric_versions,
    run_metric_versions,
    run_plan,
    run_scenarios,
    run_scenarios_awaiting_translation_review,
)

logger = logging.getLogger(__name__)

BULK_BATCH = 1000
UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


@transaction.atomic
def run_create(
    *,
    name: str,
    targets: list[ModelConfiguration],
    simulator: ModelConfiguration,
    judge: ModelConfiguration,
    release: Release | None = None,
    metric_versions: list[MetricVersion] | None = None,
    turns: int = 8,
    replicates: int = 1,
    judgments_per_conversation: int = 3,
    typo_rate: float = 0.03,
    seed: int | None = None,
    use_anchors: bool = True,
    rubric_grading: str = RubricGrading.PER_CRITERION,
    created_by: AbstractBaseUser | None = None,
    spending_cap: Decimal | None = None,
    further_judges: list[tuple[ModelConfiguration, int]] | None = None,
    rubric_items: list[RubricItem] | None = None,
    fidelity_checker: ModelConfiguration | None = None,
    use_batch: bool = False,
) -> EvaluationRun:
    """A draft run; nothing is called until `run_launch`.

    `use_batch`: judging and the checks go through the providers' batch APIs where the
    configuration's provider has one (`services.batching`).

    `fidelity_checker` reads every transcript for the simulated user's fidelity (default: the
    judge).

    `further_judges` (configuration, readings per conversation) seat a panel after `judge`
    (`evaluations.services.panel`); without them the run has its one judge, as ever.
    """
    name = (name or "").strip()
    if not name:
        raise ApplicationError(_("Give the run a name, e.g. “Release 1.0 — three demo models”."))
    if not targets:
        raise ApplicationError(_("Choose at least one target model configuration."))
    if release is None and not metric_versions and not rubric_items:
        raise ApplicationError(_("Choose a release, some metric versions or some rubric items."))
    if not 1 <= turns <= MAX_TURNS:
        raise ApplicationError(
            _("Conversations last 1 to %(max_turns)s user turns, not %(turns)s.")
            % {"max_turns": MAX_TURNS, "turns": turns}
        )
    if replicates < 1:
        raise ApplicationError(_("Simulate each scenario at least once (replicates ≥ 1)."))
    if judgments_per_conversation < 1 or judgments_per_conversation % 2 == 0:
        raise ApplicationError(
            _("Use an odd number of judgments per conversation (1, 3, 5…) so a majority decides.")
        )
    if not 0.0 <= typo_rate <= 1.0:
        raise ApplicationError(_("The typo rate is a share between 0 and 1, e.g. 0.03."))
    if rubric_grading not in RubricGrading.values:
        raise ApplicationError(
            _("Grade rubrics %(items)s.") % {"items": " or ".join(RubricGrading.values)}
        )
    if spending_cap is not None and spending_cap <= 0:
        raise ApplicationError(_("A spending cap is a positive amount, e.g. 25.00."))
    checkers = [fidelity_checker] if fidelity_checker else []
    inactive = [c.name for c in [*targets, simulator, judge, *checkers] if not c.is_active]
    if inactive:
        raise ApplicationError(
            _("These model configurations are switched off: %(inactive)s.") % {"inactive": inactive}
        )
    if release is not None and metric_versions:
        release_check_metric_versions(release=release, metric_versions=metric_versions)
    run = EvaluationRun.objects.create(
        name=name[:200],
        release=release,
        simulator=simulator,
        judge=judge,
        fidelity_checker=fidelity_checker,
        turns=turns,
        replicates=replicates,
        judgments_per_conversation=judgments_per_conversation,
        typo_rate=typo_rate,
        use_anchors=use_anchors,
        rubric_grading=rubric_grading,
        use_batch=use_batch,
        # A fresh seed per run unless one is given, so a re-run is a new sample but reproducible.
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31 - 1),
        created_by=created_by,
        spending_cap=spending_cap,
    )
    run.targets.set(targets)
    if further_judges:
        panel_configure(run, list(further_judges))
    if metric_versions:
        run.metric_versions.set(metric_versions)
    if rubric_items:
        run.rubric_items.set(rubric_items)
    return run


def _enqueue_dispatch(run: EvaluationRun) -> None:
    transaction.on_commit(lambda: task_send("evaluations.tasks.run_dispatch", run.pk))


def _refuse_unreviewed_translations(run: EvaluationRun) -> None:
    awaiting = run_scenarios_awaiting_translation_review(run)
    if not awaiting:
        return
    shown = ", ".join(
        f"{scenario.metric_version.metric.key} {scenario.label} ({scenario.language})"
        for scenario in awaiting[:10]
    )
    raise ApplicationError(
        ngettext(
            "%(count)d scenario is machine-translated and not yet reviewed: %(shown)s. An expert "
            "reviewer who reads its language reviews it on the scenario's page before it can "
            "run; or retire it.",
            "%(count)d scenarios are machine-translated and not yet reviewed: %(shown)s. An "
            "expert reviewer who reads their language reviews each on the scenario's page "
            "before they can run; or retire them.",
            len(awaiting),
        )
        % {"count": len(awaiting), "shown": shown}
    )


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
            _(
                "This run is %(status)s; create a new run to evaluate again "
                "(failed conversations of a finished run can be retried)."
            )
            % {"status": run.get_status_display().lower()}
        )
    if TranscriptImport.objects.filter(run=run).exists():
        # Its conversations are the file's, all made at import: resume them, never add any.
        return _resume(run, dispatch=dispatch)
    _refuse_unreviewed_translations(run)
    plan = run_plan(run)
    if plan.versions_missing_scenarios:
        shown = ", ".join(plan.versions_missing_scenarios[:10])
        more = len(plan.versions_missing_scenarios) - 10
        if more > 0:
            message = ngettext(
                "Generate scenarios first: %(shown)s and %(more)d more lack a complete set. "
                "“Generate missing scenarios” on each metric's scenario list writes them, or on "
                "the command line: manage.py generate_scenarios --run %(run_id)s",
                "Generate scenarios first: %(shown)s and %(more)d more lack a complete set. "
                "“Generate missing scenarios” on each metric's scenario list writes them, or on "
                "the command line: manage.py generate_scenarios --run %(run_id)s",
                more,
            )
        else:
            message = _(
                "Generate scenarios first: %(shown)s lack a complete set. “Generate missing "
                "scenarios” on each metric's scenario list writes them, or on the command line: "
                "manage.py generate_scenarios --run %(run_id)s"
            )
        raise ApplicationError(message % {"shown": shown, "more": more, "run_id": run.pk})
    if plan.conversations == 0 and plan.rubric.replies == 0:
        raise ApplicationError(_("This run has no scenario to simulate and no rubric item."))
    if run.status == RunStatus.DRAFT and run.spending_cap is not None:
        _check_spending_cap(run)
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
    rubric_responses_create(run=run, targets=targets)
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


def _resume(run: EvaluationRun, *, dispatch: bool) -> EvaluationRun:
    run.status = RunStatus.RUNNING
    run.halt_reason = ""
    run.save(update_fields=["status", "halt_reason", "updated_at"])
    if dispatch:
        _enqueue_dispatch(run)
    return run


def run_dispatch(*, run_id: int) -> int:
    """Enqueue a processing task for every unfinished item of a running run.

    Items claimed live by a worker are skipped (a copy would only be refused); their
    `dispatched_at` tells the reaper when each was last handed to the broker.
    """
    if not EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
        return 0
    now = timezone.now()
    live = Q(status=ConversationStatus.RUNNING, lease_expires_at__gt=now)
    count = 0
    for items in WORK_ITEMS:
        model, send = items.model, items.send
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


def _check_spending_cap(run: EvaluationRun) -> None:
    """Refuse a launch whose estimate (`run_estimate`: learned from earlier runs' call log,
    else the prior) already exceeds the run's cap; the known prices' total is a lower bound
    when some configuration has no price, so it is enough to refuse, never to accept."""
    estimate = run_estimate(run)
    cost = estimate.cost
    if cost is None or cost <= run.spending_cap:
        return
    at_least = _("at least ") if estimate.price_unknown else ""
    raise ApplicationError(
        _(
            "The estimated cost, %(at_least)s$%(cost).2f, exceeds this run's spending cap of "
            "$%(cap).2f: raise the cap or choose fewer metrics or targets."
        )
        % {"at_least": at_least, "cost": cost, "cap": run.spending_cap}
    )


def run_set_spending_cap(*, run: EvaluationRun, cap: Decimal | None) -> EvaluationRun:
    """Set or lift the cap; a run paused at its cap resumes with `run_launch`."""
    if cap is not None and cap <= 0:
        raise ApplicationError(_("A spending cap is a positive amount, e.g. 25.00."))
    EvaluationRun.objects.filter(pk=run.pk).update(spending_cap=cap)
    run.refresh_from_db()
    return run


@transaction.atomic
def run_retry_failed(*, run: EvaluationRun, dispatch: bool = True) -> int:
    """Put failed conversations and other work items (rubric replies) back in the queue (stored
    turns are kept).

    `dispatch` false: the caller processes the run itself (`run_process_inline`)."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status == RunStatus.CANCELLED:
        raise ApplicationError(_("This run was cancelled; create a new run instead."))
    failed = run.conversations.filter(status=ConversationStatus.FAILED)
    count = failed.update(status=ConversationStatus.PENDING, failure_kind="", finished_at=None)
    work_count = rubric_responses_retry_failed(run_id=run.pk)
    if count == 0 and work_count == 0:
        raise ApplicationError(_("No conversation of this run has failed."))
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
    return count + work_count


@transaction.atomic
def run_pause(*, run: EvaluationRun) -> EvaluationRun:
    """Stop handing out work; conversations in progress finish their current step."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.status != RunStatus.RUNNING:
        raise ApplicationError(_("Only a running run can be paused."))
    run.status = RunStatus.PAUSED
    run.save(update_fields=["status", "updated_at"])
    return run


@transaction.atomic
def run_cancel(*, run: EvaluationRun) -> EvaluationRun:
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.is_finished:
        raise ApplicationError(
            _("This run is already %(status)s.") % {"status": run.get_status_display().lower()}
        )
    run.status = RunStatus.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "updated_at"])
    return run
