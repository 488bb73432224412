"""A run's running usage totals equal a fresh sum over its call log, however the log was written.

`RunUsageTotal` rows are kept by triggers on `llm_llmcall` (migration `llm/0012`); the live run
page reads them instead of summing every attempt of the run. Each test compares them with the
aggregate over the LLMCall rows, exactly, after writes through every path that stores, rewrites
or removes attempts, on SQLite and PostgreSQL (and with concurrent writers on PostgreSQL).
"""

import importlib
import threading
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, connections, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from llm.bulk import calls_record_bulk, calls_restore_bulk
from llm.models import ERROR_OUTCOMES, CallOutcome, LLMCall, RunUsageTotal
from llm.recording import prompt_text, write_now
from llm.selectors import RunCallTotals, run_call_totals

from .factories import ModelConfigurationFactory

OUTCOMES = list(CallOutcome.values)


def fresh_sum(run_id: int) -> RunCallTotals:
    """What the totals must say: the call log of the run, summed now."""
    calls = LLMCall.objects.filter(run_id=run_id)
    f = calls.aggregate(
        attempts=Count("pk"),
        successes=Count("pk", filter=Q(outcome=CallOutcome.SUCCESS)),
        failures=Count("pk", filter=Q(outcome__in=ERROR_OUTCOMES)),
        cache_hits=Count("pk", filter=Q(outcome=CallOutcome.CACHED)),
        rate_limited=Count("pk", filter=Q(outcome=CallOutcome.RATE_LIMITED)),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        waited=Sum("limit_wait_ms"),
        backoff=Sum("backoff_ms"),
    )
    # Summed in Python from the stored decimals: SQLite's SUM over decimals is a float sum.
    cost = sum(calls.values_list("cost_estimate", flat=True), Decimal(0))
    latest = calls.filter(backoff_ms__gt=0).order_by("-id").values("created_at", "backoff_ms")
    latest = latest.first()
    return RunCallTotals(
        attempts=f["attempts"],
        successes=f["successes"],
        failures=f["failures"],
        cache_hits=f["cache_hits"],
        rate_limited=f["rate_limited"],
        prompt_tokens=f["prompt"] or 0,
        completion_tokens=f["completion"] or 0,
        cost=cost,
        limit_wait_ms=f["waited"] or 0,
        backoff_ms=f["backoff"] or 0,
        latest_backoff_ends=(
            latest["created_at"] + timedelta(milliseconds=latest["backoff_ms"]) if latest else None
        ),
    )


def make_calls(configuration, *, run_id: int | None, n: int, seed: int = 0) -> list[LLMCall]:
    """Attempts of every outcome, with varied tokens, costs, waits and backoffs."""
    calls = []
    for i in range(n):
        k = seed + i
        calls.append(
            LLMCall(
                configuration=configuration,
                role="judge",
                purpose="tests.usage",
                group_id=uuid.uuid4(),
                attempt=1 + k % 3,
                fingerprint=f"{k:064x}",
                prompt_id=prompt_text([{"role": "user", "content": "usage"}]).sha256,
                outcome=OUTCOMES[k % len(OUTCOMES)],
                prompt_tokens=7 * k % 101,
                completion_tokens=3 * k % 53,
                cost_estimate=Decimal(k % 997) / Decimal(10**8) * 137,
                limit_wait_ms=k % 5,
                backoff_ms=250 * (k % 7 == 3),
                run_id=run_id,
                work_item=f"conversation:{k % 4}",
            )
        )
    return calls


def _prompt() -> list:
    return [prompt_text([{"role": "user", "content": "usage"}])]


@pytest.mark.django_db
def test_totals_follow_every_path_that_writes_rewrites_or_removes_attempts():
    configuration = ModelConfigurationFactory()
    run_a, run_b = 9001, 9002
    # The recorder's bulk write, two runs and unattributed attempts in one statement.
    batch = make_calls(configuration, run_id=run_a, n=60) + make_calls(
        configuration, run_id=run_b, n=25, seed=500
    )
    batch += make_calls(configuration, run_id=None, n=5, seed=900)
    with transaction.atomic():
        calls_record_bulk(calls=batch, prompts=_prompt())
    assert run_call_totals(run_id=run_a) == fresh_sum(run_a)
    assert fresh_sum(run_a).attempts == 60
    assert fresh_sum(run_a).latest_backoff_ends is not None
    # The same batch written again (a commit that applied but failed on the client): nothing
    # new, so nothing added.
    before = run_call_totals(run_id=run_a)
    with transaction.atomic():
        calls_record_bulk(calls=batch, prompts=_prompt())
    assert run_call_totals(run_id=run_a) == before == fresh_sum(run_a)
    # One attempt at a time (the gateway outside the engine).
    for call in make_calls(configuration, run_id=run_a, n=8, seed=2000):
        write_now(call, _prompt()[0])
    # The journal replay: stored attempts are skipped, the others added.
    journaled = make_calls(configuration, run_id=run_b, n=10, seed=3000)
    calls_record_bulk(calls=journaled[:4], prompts=_prompt())
    replay = [
        LLMCall(**{f.attname: getattr(c, f.attname) for f in LLMCall._meta.concrete_fields})
        for c in journaled
    ]
    for call in replay:
        call.pk = None
    calls_restore_bulk(calls=replay, prompts=_prompt())
    assert LLMCall.objects.filter(run_id=run_b).count() == 35
    for run_id in (run_a, run_b):
        assert run_call_totals(run_id=run_id) == fresh_sum(run_id)
    # Changed attempts (outcome, tokens, run) and removed ones, the latest backoff among them.
    LLMCall.objects.filter(run_id=run_a, outcome=CallOutcome.TIMEOUT).update(
        outcome=CallOutcome.SUCCESS, prompt_tokens=1000
    )
    LLMCall.objects.filter(run_id=run_b, outcome=CallOutcome.CACHED).update(run_id=run_a)
    latest = LLMCall.objects.filter(run_id=run_a, backoff_ms__gt=0).order_by("-id").first()
    latest.delete()
    LLMCall.objects.filter(run_id=run_b, outcome=CallOutcome.MALFORMED).delete()
    for run_id in (run_a, run_b):
        assert run_call_totals(run_id=run_id) == fresh_sum(run_id)
    assert run_call_totals(run_id=run_a).latest_backoff_ends == fresh_sum(run_a).latest_backoff_ends
    # Every attempt of a run removed: its figures are zero, as for a run never started.
    LLMCall.objects.filter(run_id=run_b).delete()
    assert run_call_totals(run_id=run_b) == fresh_sum(run_b) == RunCallTotals()
    assert run_call_totals(run_id=424242) == RunCallTotals()


@pytest.mark.django_db
def test_the_migration_fills_the_totals_from_the_attempts_already_stored():
    configuration = ModelConfigurationFactory()
    calls_record_bulk(
        calls=make_calls(configuration, run_id=77, n=40)
        + make_calls(configuration, run_id=78, n=9),
        prompts=_prompt(),
    )
    # The latest definition of the totals (0012's, with "refused" among the failures).
    migration = importlib.import_module("llm.migrations.0015_call_outcome_refused")
    RunUsageTotal.objects.all().delete()
    assert run_call_totals(run_id=77) == RunCallTotals()
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL)
    for run_id in (77, 78):
        assert run_call_totals(run_id=run_id) == fresh_sum(run_id)
        assert run_call_totals(run_id=run_id).attempts > 0
    # The triggers go on from the filled rows.
    calls_record_bulk(calls=make_calls(configuration, run_id=77, n=5, seed=40), prompts=_prompt())
    assert run_call_totals(run_id=77) == fresh_sum(77)


@pytest.mark.slow(reason="six concurrent writers on PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_of_one_run_lose_no_count():
    """Threads, each on its own connection, write batches of one run at once (PostgreSQL)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    configuration = ModelConfigurationFactory()
    run_id, writers, batches, per_batch = 31337, 6, 12, 40
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            start.wait()
            for b in range(batches):
                calls = make_calls(
                    configuration,
                    run_id=run_id,
                    n=per_batch,
                    seed=(index * batches + b) * per_batch,
                )
                with transaction.atomic():
                    calls_record_bulk(calls=calls, prompts=_prompt())
                    if b % 3 == 0:
                        # A batch written twice in its transaction (the retry path).
                        calls_record_bulk(calls=calls, prompts=_prompt())
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    totals = run_call_totals(run_id=run_id)
    assert totals.attempts == writers * batches * per_batch
    assert totals == fresh_sum(run_id)
    # The writers added to rows of their own (one per connection, up to the shard count).
    assert RunUsageTotal.objects.filter(run_id=run_id).count() > 1


@pytest.mark.django_db
def test_waiting_is_read_from_the_latest_attempt_that_backed_off():
    configuration = ModelConfigurationFactory()
    calls = make_calls(configuration, run_id=5, n=3)
    for call in calls:
        call.backoff_ms = 0
    calls[1].backoff_ms = 30_000
    calls_record_bulk(calls=calls, prompts=_prompt())
    ends = run_call_totals(run_id=5).latest_backoff_ends
    assert ends == fresh_sum(5).latest_backoff_ends
    assert timezone.now() < ends <= timezone.now() + timedelta(seconds=30)
