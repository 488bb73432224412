"""Celery tasks: take primary keys, call one service, own the retry policy.

The task keeps the name it had when rubric items lived in evaluations, so messages queued
before an upgrade still run (and, starting llm_, it still goes to the llm queue).
"""

from celery import shared_task
from django.conf import settings

from evaluations.services.processing import run_check_finished
from evaluations.tasks import retry_countdown

from .services.runs import rubric_response_mark_failed, rubric_response_process


@shared_task(bind=True, name="evaluations.tasks.llm_process_rubric_response", acks_late=True)
def llm_process_rubric_response(self, response_id: int) -> None:
    try:
        rubric_response_process(
            response_id=response_id, worker=self.request.hostname or "", heartbeat=True
        )
    except Exception as error:
        if self.request.retries < settings.RUN_TASK_MAX_RETRIES:
            raise self.retry(
                exc=error,
                countdown=retry_countdown(self.request.retries),
                max_retries=settings.RUN_TASK_MAX_RETRIES,
            ) from error
        response = rubric_response_mark_failed(
            response_id=response_id,
            error=f"Gave up after {self.request.retries + 1} attempts: {error}",
        )
        run_check_finished(run_id=response.run_id)
