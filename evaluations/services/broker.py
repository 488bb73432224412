"""What the broker holds: the ids of run items whose messages wait in a queue or at a worker.

After a broker restart without persistence every queued and unacknowledged message is gone,
while the database still says the items were sent. The reaper reads the broker directly (Redis:
the queues' lists and the transport's `unacked` hash, where kombu keeps every message a worker
has taken but not yet acknowledged — tasks running, or waiting for their countdown) and sends
again what is neither there nor running. A message between a queue and the `unacked` hash is
missed for a moment; sending it twice costs a message, never a model call (the claim refuses a
second delivery of a live item).
"""

from __future__ import annotations

import base64
import json
import logging
from collections import defaultdict
from collections.abc import Iterable

from celery import current_app
from django.conf import settings

logger = logging.getLogger(__name__)
QUEUES = ("llm", "default")
UNACKED = "unacked"  # kombu's Redis transport: delivery tag -> [message, exchange, routing key]


def broker_held_ids(task_names: Iterable[str]) -> dict[str, set[int]] | None:
    """Per task name, the first-argument ids of its messages the broker holds; None when the
    broker cannot be read this way (not Redis, or down): the caller falls back on age."""
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return None
    wanted = set(task_names)
    held: dict[str, set[int]] = defaultdict(set)
    try:
        with current_app.connection_for_read() as connection:
            client = connection.default_channel.client
            raw = []
            for queue in QUEUES:
                raw.extend(client.lrange(queue, 0, -1))
            raw.extend(json.loads(v)[0] for v in client.hvals(UNACKED))
    except Exception as error:  # noqa: BLE001 - the age rule still works
        logger.warning("Could not read the broker's messages: %s", error)
        return None
    for message in raw:
        name, ids = _task_and_ids(message)
        if name in wanted:
            held[name].update(ids)
    return held


def _task_and_ids(message) -> tuple[str, list[int]]:
    try:
        if isinstance(message, bytes | str):
            message = json.loads(message)
        name = message["headers"]["task"]
        body = message["body"]
        if message["properties"].get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
    except (KeyError, TypeError, ValueError, IndexError):
        return "", []
    first = args[0] if args else None
    if isinstance(first, int):
        return name, [first]
    if isinstance(first, list):
        return name, [pk for pk in first if isinstance(pk, int)]
    return name, []
