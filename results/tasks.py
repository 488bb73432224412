"""Celery tasks of the results app: take primary keys, call one service."""

from celery import shared_task


@shared_task(name="results.tasks.summaries_refresh", acks_late=True)
def summaries_refresh(run_id: int) -> None:
    from evaluations.models import EvaluationRun

    from .services import summaries_refresh as refresh

    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is not None:
        refresh(run=run)


@shared_task(name="results.tasks.summaries_refresh_booked", acks_late=True)
def summaries_refresh_booked(run_id: int) -> None:
    from .services.freshness import refresh_booked

    refresh_booked(run_id)
