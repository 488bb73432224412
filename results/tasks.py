"""Celery tasks of the results app: take primary keys, call one service."""

from celery import shared_task

from evaluations.models import EvaluationRun

from .services.refresh import refresh_booked
from .services.refresh import results_refresh as refresh


@shared_task(name="results.tasks.results_refresh", acks_late=True)
def results_refresh(run_id: int) -> None:
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is not None:
        refresh(run=run)


@shared_task(name="results.tasks.analysis_refresh_booked", acks_late=True)
def analysis_refresh_booked(run_id: int) -> None:
    refresh_booked(run_id)


@shared_task(name="results.tasks.refresh_stale_bookings")
def refresh_stale_bookings() -> None:
    # freshness sends this module's tasks: imported here to keep the import one-way.
    from .services.freshness import refresh_stale_bookings as resend

    resend()
