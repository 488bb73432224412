"""Runs finish by themselves after faults, with real workers and beat: exactly once, exact cost.

Each test runs a small release (6–12 conversations of 4 turns, 3 judgments) against the local
server with some latency, injects one fault mid-run and waits — no human, no `run_launch` —
for the run to complete. Leases and the reaper interval are shortened to seconds.
"""

import pytest
from django.db import connection
from django.db.models import Count, Sum

from evaluations.models import Conversation, ConversationStatus, RunStatus, Turn
from evaluations.selectors import run_usage
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_run_worker import (  # noqa: F401 - _taxonomy is an autouse fixture
    _taxonomy,
    release_with_scenarios,
    run_status,
    wait_for,
)

pytestmark = [
    pytest.mark.worker,
    pytest.mark.faults,
    pytest.mark.slow(reason="kills, restarts and cuts off real Celery workers"),
]

TURNS = 4
JUDGMENTS = 3
ANCHOR_CHECKS = 1  # one measured-coverage call per conversation
FIDELITY_CHECKS = 1  # one reading of the simulated user per conversation
CALLS_PER_CONVERSATION = 2 * TURNS + ANCHOR_CHECKS + FIDELITY_CHECKS + JUDGMENTS
FAST_RECOVERY = {
    "RUN_CLAIM_LEASE_SECONDS": "2",
    "RUN_REAPER_INTERVAL_SECONDS": "1",
    "RUN_REDISPATCH_AFTER_SECONDS": "4",
    "RUN_TASK_RETRY_BACKOFF_SECONDS": "0.5",
    # Small batches, so the run's conversations are spread over every worker (and the killed
    # one has some of them).
    "ENGINE_BATCH_SIZE": "2",
}
HTTP_OUTCOMES = [o for o in CallOutcome.values if o != CallOutcome.CACHED]


def launch(fake: FakeModels, *, metrics: int):
    run = runs.run_create(
        name="Fault run",
        release=release_with_scenarios(metrics),
        targets=[fake.target],
        simulator=fake.simulator,
        judge=fake.judge,
        turns=TURNS,
        judgments_per_conversation=JUDGMENTS,
        typo_rate=0.0,
    )
    return runs.run_launch(run=run)


def assert_exactly_once_with_exact_accounting(run, fake, *, conversations: int) -> None:
    rows = Conversation.objects.filter(run=run)
    assert rows.count() == conversations
    assert set(rows.values_list("status", flat=True)) == {ConversationStatus.COMPLETED}
    shapes = rows.annotate(
        n_turns=Count("turns", distinct=True), n_judgments=Count("judgments", distinct=True)
    )
    assert {(c.n_turns, c.n_judgments) for c in shapes} == {(TURNS, JUDGMENTS)}
    run.refresh_from_db()
    assert run.conversations_completed == conversations
    assert run.conversations_failed == 0
    # The run's figures are the call log's, and every call of the run's models is attributed.
    usage = run_usage(run_id=run.pk)
    logged = LLMCall.objects.filter(run_id=run.pk).aggregate(cost=Sum("cost_estimate"))
    assert usage.cost == logged["cost"] > 0
    models = [fake.simulator, fake.target, fake.judge]
    assert not LLMCall.objects.filter(run_id__isnull=True, configuration__in=models).exists()
    per_item = sum(
        run_usage(run_id=run.pk, work_item=f"conversation:{pk}").attempts
        for pk in rows.values_list("pk", flat=True)
    )
    assert per_item == usage.attempts


def launch_and_kill_mid_run(fake: FakeModels, doomed):
    """Launch a two-metric run and kill the `doomed` worker once two of its conversations have
    taken a turn: mid-conversation, with calls in flight."""
    run = launch(fake, metrics=2)
    wait_for(
        lambda: (
            Conversation.objects.filter(
                run=run, status=ConversationStatus.RUNNING, claimed_by__startswith=f"{doomed.name}@"
            )
            .exclude(turns=None)
            .count()
            >= 2
        ),
        timeout=60,
        what="conversations in progress",
    )
    doomed.kill()
    return run


def test_a_worker_killed_mid_run_is_recovered_without_anyone(celery_worker_factory, fake_openai):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    survivor = celery_worker_factory(concurrency=1, beat=True, extra_env=FAST_RECOVERY)
    doomed = celery_worker_factory(concurrency=2, extra_env=FAST_RECOVERY)
    run = launch_and_kill_mid_run(fake, doomed)
    assert Conversation.objects.filter(run=run, status=ConversationStatus.RUNNING).exists()

    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    assert_exactly_once_with_exact_accounting(run, fake, conversations=12)
    # Every request the server received is in the call log: with its reply, or — sent by the
    # killed worker, its reply never recorded — as "outcome unknown" with its request, restored
    # from the killed worker's journal (a request journaled just before the kill may never
    # have reached the server: unknown too). Cost is what the endpoint billed for every reply
    # the platform received.
    logged = LLMCall.objects.filter(run_id=run.pk, outcome__in=HTTP_OUTCOMES)
    unknown = logged.filter(outcome=CallOutcome.UNKNOWN)
    known = logged.count() - unknown.count()
    tokens = logged.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    received = fake_openai.request_count
    print(
        f"endpoint received {received}, call log holds {logged.count()}: {known} with their "
        f"reply, {unknown.count()} outcome unknown; billed {fake_openai.billed_tokens} tokens, "
        f"logged {tokens['p'] + tokens['c']}"
    )
    assert known <= received <= known + unknown.count()
    assert unknown.count() <= 2 * 2  # at most one call in flight per conversation killed
    assert all(call.prompt_messages for call in unknown)
    # Replies the endpoint sent as the worker died were billed but never received.
    unanswered = fake_openai.billed_tokens - (tokens["p"] + tokens["c"])
    assert unanswered >= 0
    if received == known:
        assert unanswered == 0
    assert "Reaper" in survivor.log()


def test_duplicate_deliveries_neither_double_count_nor_call_twice(
    celery_worker_factory, fake_openai
):
    from evaluations.tasks import llm_process_conversation

    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.02
    celery_worker_factory(concurrency=3, extra_env=FAST_RECOVERY)
    run = launch(fake, metrics=1)
    # Every conversation delivered three times in all, while the first copies are at work.
    for pk in Conversation.objects.filter(run=run).values_list("pk", flat=True):
        llm_process_conversation.delay(pk)
        llm_process_conversation.delay(pk)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    assert_exactly_once_with_exact_accounting(run, fake, conversations=6)
    usage = run_usage(run_id=run.pk)
    # No second delivery worked alongside the first: not one call more than the plan.
    assert usage.attempts == usage.successes == 6 * CALLS_PER_CONVERSATION
    assert usage.cache_hits == 0
    assert fake_openai.request_count == 6 * CALLS_PER_CONVERSATION


@pytest.mark.skipif(
    "postgresql" not in __import__("django.conf").conf.settings.DATABASES["default"]["ENGINE"],
    reason="drops the workers' PostgreSQL connections",
)
def test_dropped_database_connections_are_survived(celery_worker_factory, fake_openai):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    celery_worker_factory(concurrency=2, beat=True, extra_env=FAST_RECOVERY)
    run = launch(fake, metrics=1)
    wait_for(
        lambda: Turn.objects.filter(conversation__run=run).count() >= 4,
        timeout=60,
        what="some turns",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchone()[0] >= 1
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    assert_exactly_once_with_exact_accounting(run, fake, conversations=6)


@pytest.mark.skipif(
    not __import__("django.conf").conf.settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="workers on separate hosts share Redis, not a broker folder",
)
def test_two_workers_as_on_separate_hosts_keep_the_shared_concurrency_limit(
    celery_worker_factory, fake_openai, tmp_path
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    for configuration in (fake.simulator, fake.target, fake.judge):
        configuration.max_concurrency = 1
        configuration.save()
    hosts = []
    for host in ("host-a", "host-b"):
        # Own settings and files per "host"; only PostgreSQL and Redis are shared.
        var = tmp_path / host
        var.mkdir()
        hosts.append(
            celery_worker_factory(
                concurrency=3,
                # One conversation per batch: six messages for the six processes.
                extra_env={
                    **FAST_RECOVERY,
                    "ENGINE_BATCH_SIZE": "1",
                    "IMPACTBENCH_VAR_DIR": str(var),
                },
            )
        )
    run = launch(fake, metrics=1)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    assert_exactly_once_with_exact_accounting(run, fake, conversations=6)
    # Six processes could send six requests at once; the three limits of one allow three.
    assert 2 <= fake_openai.max_in_flight <= 3
    workers = set(Conversation.objects.filter(run=run).values_list("claimed_by", flat=True))
    assert len(workers) == 2, workers


@pytest.mark.skipif(
    not __import__("django.conf").conf.settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="empties a Redis broker database",
)
def test_a_broker_that_lost_its_queues_is_recovered_by_the_reaper(
    celery_worker_factory, fake_openai
):
    """A broker restarted without persistence: every queued and unacknowledged message is gone."""
    import redis
    from django.conf import settings

    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    celery_worker_factory(concurrency=1, beat=True, extra_env=FAST_RECOVERY)
    run = launch(fake, metrics=1)
    wait_for(
        lambda: Turn.objects.filter(conversation__run=run).count() >= 2,
        timeout=60,
        what="the first turns",
    )
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    assert broker.llen("llm") >= 1  # conversations still waiting in the queue
    # A restart both empties the database and drops every connection; only this test's
    # database (and its clients) are touched, as other users may share the server.
    db = broker.connection_pool.connection_kwargs.get("db", 0)
    broker.flushdb()
    me = broker.client_id()
    for client in broker.client_list():
        if int(client.get("db", -1)) == db and int(client["id"]) != me:
            broker.client_kill_filter(_id=client["id"])
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    assert_exactly_once_with_exact_accounting(run, fake, conversations=6)
