import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.utils import timezone

from .exceptions import ApplicationError
from .models import RoleChange, WorkerPing
from .roles import Role, user_has_role


def worker_ping_answer(*, token: str, requested_at: str) -> WorkerPing:
    """Record that a worker ran a ping task; repeated delivery of the same ping is harmless."""
    ping, _ = WorkerPing.objects.get_or_create(
        token=token,
        defaults={
            "requested_at": datetime.fromisoformat(requested_at),
            "answered_at": timezone.now(),
            "worker_hostname": socket.gethostname(),
        },
    )
    return ping


HEARTBEAT_KEEP = timedelta(days=1)


def worker_heartbeat_record() -> WorkerPing:
    """A ping answered at once (the beat entry's), keeping one day of them."""
    now = timezone.now()
    WorkerPing.objects.filter(answered_at__lt=now - HEARTBEAT_KEEP).delete()
    return WorkerPing.objects.create(
        token=f"heartbeat-{uuid.uuid4().hex}",
        requested_at=now,
        answered_at=now,
        worker_hostname=socket.gethostname(),
    )


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def readiness_checks() -> list[Check]:
    """Database, broker and a worker: what must work for the platform to serve and evaluate."""
    checks = []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks.append(Check("database", True, connection.vendor))
    except Exception as error:  # noqa: BLE001 - reported, not raised
        checks.append(Check("database", False, f"{type(error).__name__}: {error}"))
    try:
        # The project's app (impactbench_site/celery.py), without core importing the project.
        with current_app.connection_for_write(
            url=settings.CELERY_BROKER_URL, connect_timeout=2
        ) as broker:
            broker.ensure_connection(max_retries=1, timeout=2)
            checks.append(Check("broker", True, broker.transport_cls))
    except Exception as error:  # noqa: BLE001
        checks.append(Check("broker", False, f"{type(error).__name__}: {error}"))
    max_age = settings.HEALTH_WORKER_MAX_AGE_SECONDS
    try:
        last = WorkerPing.objects.order_by("-answered_at").values_list("answered_at", flat=True)
        last = last.first()
    except Exception:  # noqa: BLE001 - the database check already says why
        last = None
    if last is None:
        checks.append(Check("worker", False, "no worker has answered yet (is beat running?)"))
    else:
        age = (timezone.now() - last).total_seconds()
        detail = f"last heartbeat {age:.0f} s ago (limit {max_age} s)"
        checks.append(Check("worker", age <= max_age, detail))
    return checks


@transaction.atomic
def role_set(*, actor, user, role: Role, granted: bool) -> RoleChange | None:
    """Grant or withdraw one of the four platform roles, recording who, whom and when.

    Only platform role groups are touched; staff and superuser flags, passwords and other
    groups are outside a maintainer's reach. Returns None when nothing changed.
    """
    if not user_has_role(actor, Role.MAINTAINER):
        raise ApplicationError("Only maintainers assign roles.")
    role = Role(role)
    if user.is_superuser:
        raise ApplicationError("A superuser holds every role; there is nothing to change.")
    group, _ = Group.objects.get_or_create(name=role.value)
    holds = user.groups.filter(pk=group.pk).exists()
    if holds == granted:
        return None
    if granted:
        user.groups.add(group)
    else:
        user.groups.remove(group)
    if hasattr(user, "_impactbench_roles"):
        del user._impactbench_roles
    return RoleChange.objects.create(actor=actor, user=user, role=role.value, granted=granted)
