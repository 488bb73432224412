"""The worker ping round trip: send a ping task through the broker and wait for its answer.

Apart from the services because it sends a task whose body is a service (core.tasks imports
core.services), so the import graph runs one way: workers → tasks → services.
"""

import time
import uuid

from django.db import transaction
from django.utils import timezone

from .exceptions import ApplicationError
from .models import WorkerPing
from .tasks import worker_ping


def worker_ping_roundtrip(*, timeout_seconds: float = 60.0) -> WorkerPing:
    """Send a ping through the broker and wait until a worker has written its answer."""
    token = uuid.uuid4().hex
    now = timezone.now()
    transaction.on_commit(lambda: worker_ping.delay(token, now.isoformat()))
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        ping = WorkerPing.objects.filter(token=token).first()
        if ping is not None:
            return ping
        time.sleep(0.2)
    raise ApplicationError(
        f"No Celery worker answered within {timeout_seconds:.0f} s. "
        "Start one with `.venv/bin/celery -A impactbench_site worker -Q default,llm`."
    )
