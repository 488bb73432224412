"""A broker restarted without persistence, at the default recovery settings.

The test runs its own Redis (never the shared one), points this process and a real worker with
beat at it, launches a run whose batches wait in the queue, then stops Redis and starts it
again empty: every queued and unacknowledged message is gone. The reaper (every
RUN_REAPER_INTERVAL_SECONDS, default 30) finds pending conversations whose ids are in no
message the broker holds and sends them again; the run must resume within a minute of the
broker's return and finish exactly once, with the call log equal to what the endpoint answered.
"""

import contextlib
import shutil
import time

import pytest
from celery import current_app
from django.db.models import Sum
from kombu import pools as kombu_pools

from evaluations.models import Conversation, ConversationStatus, RunStatus
from llm.models import LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_run_recovery import (
    HTTP_OUTCOMES,
    assert_exactly_once_with_exact_accounting,
    launch,
)
from tests.evaluations.test_run_worker import (  # noqa: F401 - _taxonomy is an autouse fixture
    _taxonomy,
    run_status,
    wait_for,
)
from tests.own_redis import OwnRedis, free_port

pytestmark = [
    pytest.mark.worker,
    pytest.mark.faults,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
    # Once is enough: the PostgreSQL pass, whose deployments run Redis.
    pytest.mark.skipif(
        "postgresql" not in __import__("django.conf").conf.settings.DATABASES["default"]["ENGINE"],
        reason="runs in the PostgreSQL pass",
    ),
    pytest.mark.slow(reason="restarts a Redis broker under a running worker"),
]

PORT = free_port()
URL = f"redis://127.0.0.1:{PORT}/0"


@contextlib.contextmanager
def celery_sending_to(url: str):
    """This process's Celery app sends to `url` (the worker gets it from its environment)."""
    conf = current_app.conf
    before = conf.broker_url, conf.broker_write_url, conf.broker_read_url
    _pools_drop()
    conf.broker_url = conf.broker_write_url = conf.broker_read_url = url
    try:
        yield
    finally:
        _pools_drop()
        conf.broker_url, conf.broker_write_url, conf.broker_read_url = before


def _pools_drop() -> None:
    """Close and forget every broker connection and producer pool, kombu's process-wide
    groups included: a producer pool left there would keep a closed connection pool, and every
    later task sent from this process would fail with "Acquire on closed pool"."""
    current_app.pool.force_close_all()
    current_app._pool = None
    current_app.amqp._producer_pool = None
    kombu_pools.reset()


def test_a_run_resumes_within_a_minute_of_the_broker_returning_empty(
    celery_worker_factory, fake_openai, tmp_path, settings
):
    redis = OwnRedis(tmp_path, PORT)
    redis.start()
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    settings.CELERY_BROKER_URL = URL
    try:
        with celery_sending_to(URL):
            # Default recovery settings; one conversation a batch so most wait in the queue.
            celery_worker_factory(
                concurrency=1,
                beat=True,
                extra_env={"CELERY_BROKER_URL": URL, "ENGINE_BATCH_SIZE": "1"},
            )
            run = launch(fake, metrics=1)
            wait_for(
                lambda: Conversation.objects.filter(
                    run=run, status=ConversationStatus.COMPLETED
                ).exists(),
                timeout=60,
                what="a first conversation",
            )
            redis.stop()
            time.sleep(2)
            redis.start()
            returned = time.monotonic()
            waiting = set(
                Conversation.objects.filter(run=run, status=ConversationStatus.PENDING).values_list(
                    "pk", flat=True
                )
            )
            assert waiting, "nothing was left in the queue to lose"
            wait_for(
                lambda: (
                    Conversation.objects.filter(pk__in=waiting)
                    .exclude(status=ConversationStatus.PENDING)
                    .exists()
                ),
                timeout=75,
                what="a conversation whose message was lost",
            )
            resumed = time.monotonic() - returned
            print(
                f"{len(waiting)} conversations lost their messages; resumed {resumed:.1f} s "
                "after the broker's return"
            )
            assert resumed < 60
            wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=180, what="the run")
            print(f"run complete {time.monotonic() - returned:.1f} s after the broker's return")
    finally:
        redis.stop()
    assert_exactly_once_with_exact_accounting(run, fake, conversations=6)
    logged = LLMCall.objects.filter(run_id=run.pk, outcome__in=HTTP_OUTCOMES)
    tokens = logged.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    print(f"endpoint answered {fake_openai.request_count}, call log holds {logged.count()}")
    assert logged.count() == fake_openai.request_count
    assert tokens["p"] + tokens["c"] == fake_openai.billed_tokens
