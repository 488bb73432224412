"""Budget and health of a running run: the spending cap and configurations that keep failing.

- Spending cap: before each conversation is claimed, the run's actual cost (the call log) is
  compared with `spending_cap`; once reached, the run is paused with the reason shown, so no
  new work starts and the conversations in progress finish their step.
- Journal failures: when a worker's call journal cannot be written while it records a run's
  calls, the run says when and why (`run_note_journal_failure`): its call log stays exact, but
  until that is fixed a killed worker loses its last flush window.
- Persistent failure: a configuration whose last RUN_PAUSE_AFTER_ERRORS calls in this run all
  failed, or that answered with an authentication error, is paused for the run instead of
  burning retries. A paused target's remaining conversations fail with the reason (the run can
  finish, and "retry failed" resumes them once the configuration is fixed); a paused simulator
  or judge pauses the whole run.
"""

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from llm.exceptions import LLMError
from llm.models import ERROR_OUTCOMES, ModelConfiguration
from llm.selectors import llm_call_configuration_id, llm_calls_of_run, run_call_totals

from ..models import EvaluationRun, RunStatus
from .panel import run_panel

AUTH_STATUSES = (401, 403)


def run_cost(run_id: int) -> Decimal:
    """What the run's attempts cost so far, from its running totals (asked before each claim)."""
    return run_call_totals(run_id=run_id).cost


def run_pause_with_reason(*, run_id: int, reason: str) -> bool:
    """Pause a running run and say why (shown on the run page and by the CLI)."""
    return bool(
        EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.PAUSED, halt_reason=reason[:2000]
        )
    )


def run_note_journal_failure(*, run_ids: Iterable[int], reason: str, at: datetime) -> int:
    """Say on the runs that a worker recorded their calls without its journal (the last time)."""
    return EvaluationRun.objects.filter(pk__in=list(run_ids)).update(
        journal_failed_at=at, journal_failure=reason[:300]
    )


def run_admits_work(*, run: EvaluationRun, target_id: int) -> str | None:
    """None when a conversation of `target_id` may start; else why not ("" = run not running).

    Pauses the run when its spending cap is reached.
    """
    if run.status != RunStatus.RUNNING:
        return ""
    if run.spending_cap is not None:
        spent = run_cost(run.pk)
        if spent >= run.spending_cap:
            run_pause_with_reason(
                run_id=run.pk,
                reason=(
                    f"Stopped at the spending cap: ${spent:.4f} spent of ${run.spending_cap:.4f}. "
                    "Raise the cap and resume to continue."
                ),
            )
            return ""
    return run.paused_configurations.get(str(target_id))


def _failing_configuration(error: BaseException) -> int | None:
    call_ids = getattr(error, "call_ids", None) or []
    if not call_ids:
        return None
    return llm_call_configuration_id(call_ids[-1])


def run_note_outcome(*, run_id: int, target_id: int, error: BaseException | None) -> None:
    """After a conversation step failed: pause its configuration if it fails persistently."""
    # A gateway error may arrive wrapped (a ConversationFailure naming the side that failed).
    while error is not None and not isinstance(error, LLMError):
        error = error.__cause__
    if error is None:
        return
    configuration_id = _failing_configuration(error)
    if configuration_id is None:
        return
    reason = ""
    if error.status_code in AUTH_STATUSES:
        reason = f"authentication failed (HTTP {error.status_code}): {error.message[:300]}"
    else:
        window = settings.RUN_PAUSE_AFTER_ERRORS
        recent = list(
            llm_calls_of_run(run_id=run_id, configuration_id=configuration_id)
            .order_by("-id")
            .values_list("outcome", flat=True)[:window]
        )
        if len(recent) == window and all(outcome in ERROR_OUTCOMES for outcome in recent):
            reason = f"its last {window} calls in this run all failed; last: {error.message[:300]}"
    if reason:
        configuration_pause(run_id=run_id, configuration_id=configuration_id, reason=reason)


@transaction.atomic
def configuration_pause(*, run_id: int, configuration_id: int, reason: str) -> None:
    run = EvaluationRun.objects.select_for_update().get(pk=run_id)
    name = ModelConfiguration.objects.filter(pk=configuration_id).values_list("name", flat=True)
    label = f"{name.first() or configuration_id} paused: {reason}"
    # The platform's own models (the simulator, every judge of the panel) halt the whole run.
    judges = {seat.judge.pk for seat in run_panel(run)}
    if configuration_id == run.simulator_id or configuration_id in judges:
        if run.status == RunStatus.RUNNING:
            run.status = RunStatus.PAUSED
            run.halt_reason = label[:2000]
            run.save(update_fields=["status", "halt_reason", "updated_at"])
        return
    if str(configuration_id) in run.paused_configurations:
        return
    run.paused_configurations = {**run.paused_configurations, str(configuration_id): label}
    run.save(update_fields=["paused_configurations", "updated_at"])
