import pytest
from django.core.management import call_command

from core.models import WorkerPing
from core.workers import worker_ping_roundtrip

pytestmark = [pytest.mark.worker, pytest.mark.embedded]


@pytest.mark.slow(reason="starts a real Celery worker")
def test_a_real_worker_runs_tasks_sent_through_the_broker(celery_worker):
    ping = worker_ping_roundtrip(timeout_seconds=90)
    assert ping.worker_hostname
    assert WorkerPing.objects.filter(token=ping.token).count() == 1
    assert ping.answered_at >= ping.requested_at


def test_ping_command_fails_clearly_without_a_worker(transactional_db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No Celery worker answered"):
        call_command("ping_worker", timeout=1)
