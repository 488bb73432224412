"""Lookups of attempts of unknown outcome back off per row, and give up (llm/reconcile.py).

A lookup that fails (the provider down, its key unset) is asked again after a gap that doubles
with each failure in a row; "not found yet" keeps the plain pace; rows never looked up come
first, so rows that always fail cannot starve the others; a row whose lookups kept failing past
the give-up age settles as "lookup failed" and its run's cost stays a lower bound.

The rows are written directly (an "outcome unknown" row as a replayed journal leaves it) at a
fixed time, so every due time is exact; lookups go through the real client to the local
OpenAI fake, or fail before any request when the configuration's key variable is unset.
"""

import logging
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import openai
import pytest

from llm.models import CallOutcome, CallReconciliation, LLMCall, ReconcileState
from llm.reconcile import (
    LOOKUP_FAILED_AFTER,
    MAX_GAP,
    RECONCILE_BATCH,
    ReconcileReport,
    calls_reconcile,
    next_check_after,
)
from llm.selectors import run_call_costs, run_unknown_outcomes
from llm.stored import STORE_KEY
from tests.llm.factories import LLMCallFactory, ModelConfigurationFactory

pytestmark = [pytest.mark.django_db]

RUN_ID = 4402
# When the rows were restored from their journal.
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
REVOKED = "IB_TEST_RECONCILE_REVOKED_API_KEY"


def _unknown(configuration, key: str, *, created_at: datetime = T0) -> LLMCall:
    return _unknown_rows(configuration, [key], created_at=created_at)[0]


def _unknown_rows(configuration, keys: list[str], *, created_at: datetime = T0) -> list[LLMCall]:
    """Rows of unknown outcome sent with `store: true`, restored at `created_at`."""
    rows = LLMCallFactory.build_batch(
        len(keys),
        configuration=configuration,
        outcome=CallOutcome.UNKNOWN,
        response_text="",
        prompt_tokens=0,
        completion_tokens=0,
        cost_estimate=Decimal(0),
        run_id=RUN_ID,
        work_item="conversation:1",
    )
    for row, key in zip(rows, keys, strict=True):
        row.parameters = {"store": True, "metadata": {STORE_KEY: key}}
    created = LLMCall.objects.bulk_create(rows)
    LLMCall.objects.filter(pk__in=[row.pk for row in created]).update(created_at=created_at)
    return list(LLMCall.objects.filter(pk__in=[row.pk for row in created]).order_by("pk"))


def _kept_at_the_provider(server, configuration, key: str) -> None:
    """The provider answered the attempt and kept its completion (the reply was never read)."""
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    with client:
        client.chat.completions.create(
            model=configuration.model_id,
            messages=[{"role": "user", "content": "Hello"}],
            store=True,
            metadata={STORE_KEY: key},
        )


@pytest.fixture
def keeping(fake_openai):
    return ModelConfigurationFactory(base_url=fake_openai.base_url, store_completions=True)


@pytest.fixture
def revoked(fake_openai, monkeypatch):
    """A configuration whose key variable is unset: every lookup fails before a request."""
    monkeypatch.delenv(REVOKED, raising=False)
    return ModelConfigurationFactory(
        name="Revoked", base_url=fake_openai.base_url, store_completions=True, api_key_env=REVOKED
    )


def _row(call: LLMCall) -> CallReconciliation:
    return CallReconciliation.objects.get(call=call)


def test_the_gap_doubles_with_each_failure_in_a_row_up_to_the_cap(settings):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    minutes = [next_check_after(failures) / timedelta(minutes=1) for failures in range(12)]
    assert minutes == [1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360]
    assert next_check_after(10**6) == MAX_GAP  # no overflow after years of failures


def test_a_failing_lookup_is_asked_again_after_growing_gaps(revoked, fake_openai, settings):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    call = _unknown(revoked, "a:1")
    # Not before LLM_RECONCILE_AFTER_SECONDS after it was restored.
    assert calls_reconcile(now=T0 + timedelta(seconds=59)) == ReconcileReport()
    now = T0 + timedelta(seconds=60)
    for failures, gap in enumerate([60, 120, 240, 480, 960], start=1):
        assert calls_reconcile(now=now) == ReconcileReport(retried=1)
        row = _row(call)
        assert (row.state, row.tries, row.failures) == (ReconcileState.PENDING, failures, failures)
        assert row.checked_at == now
        assert row.next_check_at == now + timedelta(seconds=gap)
        assert REVOKED in row.error
        # Not due a second before its time.
        assert calls_reconcile(now=row.next_check_at - timedelta(seconds=1)) == ReconcileReport()
        now = row.next_check_at
    assert fake_openai.request_count == 0  # the key was never usable: nothing was sent


def test_not_found_yet_keeps_the_plain_pace_and_ends_a_run_of_failures(
    keeping, fake_openai, settings
):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    call = _unknown(keeping, "b:1")
    fake_openai.list_down = True
    now = T0 + timedelta(seconds=60)
    for gap in (60, 120):  # two failures: 60 s, then 120 s
        assert calls_reconcile(now=now).retried == 1
        assert _row(call).next_check_at == now + timedelta(seconds=gap)
        now += timedelta(seconds=gap)
    fake_openai.list_down = False
    for tries in (3, 4, 5):  # answered "not found": every 60 s, the failures forgotten
        assert calls_reconcile(now=now) == ReconcileReport(retried=1)
        row = _row(call)
        assert (row.tries, row.failures, row.error) == (tries, 0, "")
        assert row.next_check_at == now + timedelta(seconds=60)
        now += timedelta(seconds=60)
    assert fake_openai.stored.lists == 3


def test_a_row_that_failed_and_then_succeeds_is_reconciled(keeping, fake_openai, settings):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    call = _unknown(keeping, "c:1")
    _kept_at_the_provider(fake_openai, keeping, "c:1")
    fake_openai.list_down = True
    now = T0 + timedelta(seconds=60)
    for _ in range(3):
        assert calls_reconcile(now=now).retried == 1
        now = _row(call).next_check_at
    fake_openai.list_down = False

    assert calls_reconcile(now=now) == ReconcileReport(reconciled=1)

    call.refresh_from_db()
    row = call.reconciliation
    assert (row.state, row.next_check_at, row.error) == (ReconcileState.RECONCILED, None, "")
    assert call.prompt_tokens == fake_openai.bill[0][1] > 0
    assert calls_reconcile(now=now + timedelta(days=1)) == ReconcileReport()


def test_rows_that_always_fail_do_not_starve_a_new_row(
    revoked, keeping, fake_openai, settings, django_assert_max_num_queries
):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    failing = _unknown_rows(revoked, [f"dead:{n}" for n in range(250)])
    first = T0 + timedelta(seconds=60)
    # The selection (one query) and one write per row looked up.
    with django_assert_max_num_queries(1 + RECONCILE_BATCH):
        assert calls_reconcile(now=first) == ReconcileReport(retried=RECONCILE_BATCH)
    # A newer row that the provider can settle, restored after the failing ones.
    fresh = _unknown(keeping, "fresh:1", created_at=first)
    _kept_at_the_provider(fake_openai, keeping, "fresh:1")

    # One minute later the 200 failed rows are due again and 50 were never looked up: older
    # than the new row all, yet the rows never looked up come first.
    report = calls_reconcile(now=first + timedelta(seconds=60))

    assert report == ReconcileReport(reconciled=1, retried=RECONCILE_BATCH - 1)
    assert _row(fresh).state == ReconcileState.RECONCILED
    assert CallReconciliation.objects.filter(call__in=failing).count() == 250


def test_a_row_failing_past_the_give_up_age_settles_as_lookup_failed(
    revoked, fake_openai, settings, caplog
):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    settings.LLM_RECONCILE_GIVE_UP_SECONDS = 3600
    call = _unknown(revoked, "d:1")
    now = T0 + timedelta(seconds=60)
    for _ in range(LOOKUP_FAILED_AFTER - 1):
        assert calls_reconcile(now=now) == ReconcileReport(retried=1)
        now = _row(call).next_check_at
    # Gaps of 1, 2, 4 … 64 minutes: the eighth failure comes past the give-up age.
    assert now == T0 + timedelta(seconds=60 + 60 * (2**7 - 1))

    with caplog.at_level(logging.WARNING, logger="llm.reconcile"):
        assert calls_reconcile(now=now) == ReconcileReport(lookup_failed=1)

    row = _row(call)
    assert row.state == ReconcileState.LOOKUP_FAILED
    assert (row.tries, row.failures, row.checked_at) == (8, 8, now)
    assert row.next_check_at is None
    assert REVOKED in row.error  # why it could not be reconciled
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "could not be reconciled" in warning.getMessage()
    assert "'Revoked'" in warning.getMessage()
    assert REVOKED in warning.getMessage()
    # Settled: never looked up again, and its cost stays unknown (not "not billed").
    assert calls_reconcile(now=now + timedelta(days=30)) == ReconcileReport()
    [costs] = run_call_costs(run_id=RUN_ID)
    assert (costs.unknown_outcome_calls, costs.lookup_failed_calls) == (1, 1)
    assert costs.reconciled_calls == 0
    outcomes = run_unknown_outcomes(run_id=RUN_ID)
    assert (outcomes.lookup_failed, outcomes.not_billed, outcomes.unsettled) == (1, 0, 0)


def test_enough_failures_before_the_give_up_age_are_still_retried(revoked, settings):
    settings.LLM_RECONCILE_AFTER_SECONDS = 60
    settings.LLM_RECONCILE_GIVE_UP_SECONDS = 10_000
    call = _unknown(revoked, "e:1")
    now = T0 + timedelta(seconds=60)
    for _ in range(LOOKUP_FAILED_AFTER):  # the eighth at 7,680 s old: not past 10,000 s
        assert calls_reconcile(now=now) == ReconcileReport(retried=1)
        now = _row(call).next_check_at
    assert _row(call).failures == LOOKUP_FAILED_AFTER
    # The ninth, at 15,360 s: past the give-up age, with its last lookups all failed.
    assert calls_reconcile(now=now) == ReconcileReport(lookup_failed=1)
    assert _row(call).state == ReconcileState.LOOKUP_FAILED
