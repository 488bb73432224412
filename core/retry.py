"""The retry policy of tasks whose work can fail transiently: back off, retry, then give up.

A task's service raises for a failure worth another attempt (it has handled the permanent ones
itself, e.g. failing the item with its reason) and gives its claim back first. The task retries
with backoff RUN_TASK_RETRY_BACKOFF_SECONDS × 2ⁿ (at most ten minutes) while fewer than
RUN_TASK_MAX_RETRIES retries were made, then hands the item to its `<entity>_mark_failed`.
"""

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from celery import Task

logger = logging.getLogger(__name__)
MAX_RETRY_COUNTDOWN = 600.0


def retry_countdown(retries: int) -> float:
    """Seconds to wait before the attempt after `retries` retries."""
    return min(MAX_RETRY_COUNTDOWN, settings.RUN_TASK_RETRY_BACKOFF_SECONDS * 2**retries)


def retries_left(retries: int) -> bool:
    return retries < settings.RUN_TASK_MAX_RETRIES


def retried_task(*, on_give_up: Callable[..., object]) -> Callable:
    """Give a bound task (`bind=True`, under `shared_task`) the retry policy above.

    Once the retries are spent, `on_give_up(*args, message=..., error=...)` gets the task's
    arguments, a message saying how many attempts were made, and the last error.
    """

    def decorate(run: Callable) -> Callable:
        @functools.wraps(run)
        def attempt(task: "Task", *args: Any, **kwargs: Any) -> object:
            try:
                return run(task, *args, **kwargs)
            except Exception as error:
                retries = task.request.retries
                if retries_left(retries):
                    logger.warning("%s%r will be retried: %s", task.name, args, error)
                    raise task.retry(
                        exc=error,
                        countdown=retry_countdown(retries),
                        max_retries=settings.RUN_TASK_MAX_RETRIES,
                    ) from error
                message = f"Gave up after {retries + 1} attempts: {error}"
                on_give_up(*args, message=message, error=error, **kwargs)
                return None

        return attempt

    return decorate
