from celery import shared_task


@shared_task(name="submissions.tasks.llm_draft_metric_candidates", acks_late=True)
def llm_draft_metric_candidates(submission_id: int) -> None:
    from .drafting import submission_draft_candidates

    submission_draft_candidates(submission_id=submission_id)


@shared_task(name="submissions.tasks.requeue_stuck_submissions")
def requeue_stuck_submissions() -> list[int]:
    """Run by Celery beat (CELERY_BEAT_SCHEDULE): see drafting.submissions_requeue_stuck."""
    from .drafting import submissions_requeue_stuck

    return submissions_requeue_stuck()
