"""Celery tasks: take primary keys, call one service, own the retry policy.

Tasks import the services at the top; a service that queues a task imports this module where it
sends (the one direction that must wait until both modules exist).

Names starting llm_ go to the llm queue. A work item's task retries transient failures with
backoff (the service has given its claim back) and fails the item once its retries are spent.
"""

import logging

from celery import shared_task
from kombu.exceptions import OperationalError

from core.exceptions import ApplicationError
from core.retry import retried_task, retry_countdown
from llm.exceptions import LLMError
from metrics_registry.models import MetricVersion

from .engine import BatchReport, process_conversations, process_rubric_responses
from .engine.journal import journals_replay
from .models import Conversation, RubricResponse, Scenario
from .services import reaper
from .services import runs as run_services
from .services.failures import conversation_mark_failed, failure_kind_of
from .services.processing import conversation_process, run_check_finished
from .services.scenarios import scenarios_generate
from .services.translation import scenario_translate

logger = logging.getLogger(__name__)


@shared_task(name="evaluations.tasks.llm_generate_scenarios", acks_late=True)
def llm_generate_scenarios(metric_version_id: int) -> None:
    version = MetricVersion.objects.filter(pk=metric_version_id).first()
    if version is not None:
        scenarios_generate(metric_version=version)


TRANSLATE_RETRIES = 3


@shared_task(bind=True, name="evaluations.tasks.llm_translate_scenario", acks_late=True)
def llm_translate_scenario(self, scenario_id: int, language: str, country: str) -> None:
    scenario = Scenario.objects.filter(pk=scenario_id).first()
    if scenario is None:
        return
    try:
        scenario_translate(scenario=scenario, language=language, country=country)
    except ApplicationError as error:  # e.g. another request translated it first: nothing to do
        logger.warning("Translation of scenario %s into %s: %s", scenario_id, language, error)
    except LLMError as error:
        if not getattr(error, "retryable", False) or self.request.retries >= TRANSLATE_RETRIES:
            raise
        raise self.retry(exc=error, countdown=retry_countdown(self.request.retries)) from error


@shared_task(name="evaluations.tasks.run_dispatch", acks_late=True)
def run_dispatch(run_id: int) -> int:
    return run_services.run_dispatch(run_id=run_id)


@shared_task(name="evaluations.tasks.runs_reap", acks_late=True)
def runs_reap() -> dict:
    journals_replay()  # a killed worker's last attempts are in the log before its run closes
    report = reaper.runs_reap()
    if report.expired or report.redispatched or report.closed or report.reconciled:
        logger.info("Reaper: %s", report)
    return report.__dict__


@shared_task(bind=True, name="evaluations.tasks.llm_process_batch", acks_late=True)
def llm_process_batch(self, conversation_ids: list[int], retries: int = 0) -> dict:
    """Process a batch of conversations concurrently (the engine); the default way runs go.

    Transient failures come back as one-item batches after the task backoff (`retries` + 1),
    until RUN_TASK_MAX_RETRIES; the engine then fails them with the reason.
    """
    # Attempts a killed process on this host journaled but never wrote go in the log first.
    journals_replay()
    report = process_conversations(
        conversation_ids, worker=self.request.hostname or "", retries=retries
    )
    return _batch_after(llm_process_batch, report, Conversation, conversation_ids, retries)


@shared_task(bind=True, name="evaluations.tasks.llm_process_rubric_batch", acks_late=True)
def llm_process_rubric_batch(self, response_ids: list[int], retries: int = 0) -> dict:
    """`llm_process_batch` for rubric replies: reply, grade and score them on the engine."""
    journals_replay()
    report = process_rubric_responses(
        response_ids, worker=self.request.hostname or "", retries=retries
    )
    return _batch_after(llm_process_rubric_batch, report, RubricResponse, response_ids, retries)


def _batch_after(task, report: BatchReport, model, ids: list[int], retries: int) -> dict:
    """Send the items to retry again after the backoff, close the runs with nothing left."""
    for item_id in report.retried:
        try:
            task.apply_async(([item_id], retries + 1), countdown=retry_countdown(retries))
        except OperationalError as error:
            # The broker is down: the item is pending again, and the reaper sends it once the
            # broker is back (it finds no message for it there).
            logger.warning("Could not queue the retry of %s %s: %s", model.__name__, item_id, error)
    for run_id in set(model.objects.filter(pk__in=ids).values_list("run_id", flat=True)):
        run_check_finished(run_id=run_id)
    return {
        "completed": report.completed,
        "failed": report.failed,
        "skipped": report.skipped,
        "retried": len(report.retried),
    }


def _conversation_give_up(conversation_id: int, *, message: str, error: Exception) -> None:
    conversation = conversation_mark_failed(
        conversation_id=conversation_id, error=message, kind=failure_kind_of(error)
    )
    run_check_finished(run_id=conversation.run_id)


@shared_task(bind=True, name="evaluations.tasks.llm_process_conversation", acks_late=True)
@retried_task(on_give_up=_conversation_give_up)
def llm_process_conversation(self, conversation_id: int) -> None:
    conversation_process(
        conversation_id=conversation_id, worker=self.request.hostname or "", heartbeat=True
    )
