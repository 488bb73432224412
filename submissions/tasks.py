from celery import shared_task


@shared_task(name="submissions.tasks.llm_draft_metric_candidates", acks_late=True)
def llm_draft_metric_candidates(submission_id: int) -> None:
    from .drafting import submission_draft_candidates

    submission_draft_candidates(submission_id=submission_id)
