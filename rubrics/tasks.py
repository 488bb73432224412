"""Celery tasks: take primary keys, call one service; the retry policy is `core.retry`'s.

The task keeps the name it had when rubric items lived in evaluations, so messages queued
before an upgrade still run (and, starting llm_, it still goes to the llm queue).
"""

from celery import shared_task

from core.retry import retried_task
from evaluations.services.processing import run_check_finished

from .services.runs import rubric_response_mark_failed, rubric_response_process


def _rubric_response_give_up(response_id: int, *, message: str, error: Exception) -> None:
    response = rubric_response_mark_failed(response_id=response_id, error=message)
    run_check_finished(run_id=response.run_id)


@shared_task(bind=True, name="evaluations.tasks.llm_process_rubric_response", acks_late=True)
@retried_task(on_give_up=_rubric_response_give_up)
def llm_process_rubric_response(self, response_id: int) -> None:
    rubric_response_process(
        response_id=response_id, worker=self.request.hostname or "", heartbeat=True
    )
