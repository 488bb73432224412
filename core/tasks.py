"""Celery tasks of core: take their arguments, call one service."""

from celery import shared_task

from . import services


@shared_task(name="core.tasks.worker_ping", acks_late=True)
def worker_ping(token: str, requested_at: str) -> None:
    services.worker_ping_answer(token=token, requested_at=requested_at)


@shared_task(name="core.tasks.worker_heartbeat")
def worker_heartbeat() -> None:
    """Sent by beat: proof for the readiness check that a worker takes tasks (and beat runs)."""
    services.worker_heartbeat_record()
