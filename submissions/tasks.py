"""Celery tasks of the submissions app: take primary keys, call one service."""

from celery import shared_task

from .drafting import submission_draft_candidates, submissions_requeue_stuck


@shared_task(name="submissions.tasks.llm_draft_metric_candidates", acks_late=True)
def llm_draft_metric_candidates(submission_id: int) -> None:
    submission_draft_candidates(submission_id=submission_id)


@shared_task(name="submissions.tasks.requeue_stuck_submissions")
def requeue_stuck_submissions() -> list[int]:
    """Run by Celery beat (CELERY_BEAT_SCHEDULE): see drafting.submissions_requeue_stuck."""
    return submissions_requeue_stuck()
