"""The work-item tasks' retry policy: back off while retries are left, then fail the item."""

import pytest

from core.retry import MAX_RETRY_COUNTDOWN, retry_countdown
from evaluations.models import ConversationStatus, FailureKind, RunStatus
from tests.evaluations.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def test_the_backoff_doubles_up_to_ten_minutes(settings):
    settings.RUN_TASK_RETRY_BACKOFF_SECONDS = 30.0
    assert [retry_countdown(n) for n in range(3)] == [30.0, 60.0, 120.0]
    assert retry_countdown(10) == MAX_RETRY_COUNTDOWN


def test_a_conversation_that_keeps_failing_is_failed_after_its_retries(settings, monkeypatch):
    from evaluations import tasks

    settings.RUN_TASK_MAX_RETRIES = 2
    attempts = []

    def failing(**kwargs):
        attempts.append(kwargs["conversation_id"])
        raise RuntimeError("the database went away")

    monkeypatch.setattr(tasks, "conversation_process", failing)  # where the task looks it up
    conversation = ConversationFactory(run__status=RunStatus.RUNNING)
    # Applied in this process: each retry runs at once, without its countdown.
    tasks.llm_process_conversation.apply((conversation.pk,))
    assert attempts == [conversation.pk] * 3
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.FAILED
    assert conversation.error == "Gave up after 3 attempts: the database went away"
    assert conversation.failure_kind == FailureKind.OTHER
