"""The limits store (a Redis of its own, LLM_LIMITS_REDIS_URL) restarted empty under a running
worker: the run resumes within seconds and finishes about as fast as without the fault, with
the call log equal to what the endpoint answered and no permit left behind in the store."""

import shutil
import time

import pytest
import redis
from django.db.models import Sum

from evaluations.models import RunStatus
from evaluations.services import runs
from llm import limits
from llm.models import LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_engine_worker import _assert_exact, _running_run
from tests.evaluations.test_run_recovery import HTTP_OUTCOMES
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
    pytest.mark.skipif(
        "postgresql" not in __import__("django.conf").conf.settings.DATABASES["default"]["ENGINE"],
        reason="runs in the PostgreSQL pass",
    ),
    pytest.mark.slow(reason="restarts the limits Redis under a running worker"),
]

PORT = free_port()
CONVERSATIONS = 24


def _in_use(store: OwnRedis, configurations) -> int:
    """Permits the store counts as in flight now (lapsed ones excluded)."""
    client = redis.Redis.from_url(store.url)
    seconds, micros = client.time()
    now = seconds + micros / 1e6
    return sum(client.zcount(limits.RedisLimits.keys(c.pk)[0], now, "+inf") for c in configurations)


def _timed_run(fake: FakeModels) -> tuple:
    run = _running_run(fake, conversations=CONVERSATIONS, turns=2, judgments=1, anchors=[])
    started = time.monotonic()
    runs.run_dispatch(run_id=run.pk)
    return run, started


def test_a_run_resumes_within_seconds_of_the_limits_store_returning_empty(
    celery_worker_factory, fake_openai, tmp_path, settings
):
    store = OwnRedis(tmp_path, PORT)
    store.start()
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.1
    models = (fake.simulator, fake.target, fake.judge)
    for configuration in models:
        configuration.max_concurrency = 4
        configuration.save()
    settings.ENGINE_BATCH_SIZE = CONVERSATIONS
    try:
        worker = celery_worker_factory(concurrency=1, extra_env={"LLM_LIMITS_REDIS_URL": store.url})
        # Without the fault first: the time to beat.
        calm, started = _timed_run(fake)
        wait_for(lambda: run_status(calm) == RunStatus.COMPLETED, timeout=120, what="a run")
        no_fault = time.monotonic() - started
        before = fake_openai.request_count

        run, started = _timed_run(fake)
        wait_for(
            lambda: fake_openai.request_count - before >= 40,
            timeout=60,
            what="calls in progress",
        )
        store.stop()
        time.sleep(3)
        store.start()  # empty
        returned = time.monotonic()
        at_return = fake_openai.request_count
        wait_for(
            lambda: fake_openai.request_count >= at_return + 20,
            timeout=30,
            what="calls after the store's return",
        )
        resumed = time.monotonic() - returned
        try:
            wait_for(
                lambda: run_status(run) == RunStatus.COMPLETED,
                timeout=no_fault + 60,
                what="the run",
            )
        except AssertionError as error:
            raise AssertionError(f"{error}\n{worker.log()[-3000:]}") from None
        took = time.monotonic() - started
        left_in_store = _in_use(store, models)
    finally:
        store.stop()
    print(
        f"no fault {no_fault:.1f} s; with the restart {took:.1f} s, 20 calls "
        f"{resumed:.1f} s after the store's return; {left_in_store} permits left in the store"
    )
    assert took < no_fault + 60
    assert left_in_store == 0  # no permit went to a waiter that had left
    _assert_exact(run, conversations=CONVERSATIONS, turns=2, judgments=1)
    logged = LLMCall.objects.filter(run_id__in=[calm.pk, run.pk], outcome__in=HTTP_OUTCOMES)
    tokens = logged.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    assert logged.count() == fake_openai.request_count
    assert tokens["p"] + tokens["c"] == fake_openai.billed_tokens
