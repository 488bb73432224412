"""Closing conversations in bulk: one transaction for many, each item with its own outcome;
and the engine's coalescing of the closes that wait while its database thread is busy."""

import asyncio
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.exceptions import ApplicationError
from core.rows import update_grouped
from evaluations.engine.bridge import run_blocking
from evaluations.engine.coalesce import Coalescer
from evaluations.models import Conversation, ConversationStatus, Judgment, RunStatus
from evaluations.services.claims import ClaimLost, claims_take
from evaluations.services.closing import conversations_finalize, conversations_mark_simulated
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory


def _judge(conversation: Conversation, present: list[bool]) -> None:
    for repetition, value in enumerate(present):
        Judgment.objects.create(
            conversation=conversation,
            repetition=repetition,
            judge=conversation.run.judge,
            seed=repetition,
            present=value,
            justification="Read.",
        )


@pytest.fixture
def three():
    run = EvaluationRunFactory(status=RunStatus.RUNNING, judgments_per_conversation=3)
    scenario = ScenarioFactory()
    conversations = [
        ConversationFactory(run=run, scenario=scenario, target=run.targets.first(), replicate=r)
        for r in range(3)
    ]
    claims = claims_take(Conversation, pks=[c.pk for c in conversations], worker="a@host")
    return run, conversations, [claims[c.pk] for c in conversations]


def _take_over(conversation: Conversation) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(
        lease_expires_at=timezone.now() - timedelta(1)
    )
    claims_take(Conversation, pks=[conversation.pk], worker="b@host")


@pytest.mark.django_db
def test_finalizing_many_gives_each_its_outcome_and_commits_the_good_ones(three):
    run, (good, stolen, unjudged), (c_good, c_stolen, c_unjudged) = three
    _judge(good, [True, False, True])
    _judge(stolen, [True, True, True])
    _judge(unjudged, [True])
    _take_over(stolen)
    outcomes = conversations_finalize([(good, c_good), (stolen, c_stolen), (unjudged, c_unjudged)])
    assert isinstance(outcomes[0], Conversation)
    assert isinstance(outcomes[1], ClaimLost)
    assert isinstance(outcomes[2], ApplicationError)
    assert "1 of its 3 judgments" in str(outcomes[2])
    good.refresh_from_db()
    assert good.status == ConversationStatus.COMPLETED
    assert (good.verdict_present, good.judgments_present, good.lease_expires_at) == (True, 2, None)
    assert Conversation.objects.get(pk=stolen.pk).status == ConversationStatus.RUNNING
    assert Conversation.objects.get(pk=unjudged.pk).status == ConversationStatus.RUNNING
    run.refresh_from_db()
    assert run.conversations_completed == 1
    # Once completed, finalizing again changes nothing and counts nothing.
    assert conversations_finalize([(good, c_good)])[0].pk == good.pk
    run.refresh_from_db()
    assert run.conversations_completed == 1


@pytest.mark.django_db
def test_marking_many_simulated_fences_each_claim(three):
    _run, (first, stolen, third), (c_first, c_stolen, c_third) = three
    _take_over(stolen)
    outcomes = conversations_mark_simulated(
        [(first, "", c_first), (stolen, "", c_stolen), (third, "The user left.", c_third)]
    )
    assert [type(o) for o in outcomes] == [Conversation, ClaimLost, Conversation]
    rows = {c.pk: c for c in Conversation.objects.filter(pk__in=[first.pk, stolen.pk, third.pk])}
    assert rows[first.pk].simulated_at is not None
    assert not rows[first.pk].stopped_early
    assert rows[stolen.pk].simulated_at is None
    assert rows[third.pk].stopped_early
    assert rows[third.pk].stop_reason == "The user left."
    # The fence renewed the leases it checked.
    assert rows[first.pk].lease_expires_at > timezone.now() + timedelta(seconds=1)


def test_items_submitted_while_the_database_thread_is_busy_share_one_call():
    calls: list[list[int]] = []

    def close(items: list[int]) -> list:
        calls.append(list(items))
        return [ValueError(f"item {i}") if i % 2 else i * 10 for i in items]

    async def main(bridge):
        coalescer = Coalescer(bridge, close)
        busy = asyncio.ensure_future(bridge.run(time.sleep, 0.2))
        await asyncio.sleep(0.01)  # the database thread is now inside the sleep
        together = await asyncio.gather(
            *(coalescer.submit(i) for i in range(6)), return_exceptions=True
        )
        await busy
        alone = await coalescer.submit(8)  # an idle thread: no waiting for company
        return together, alone, coalescer.calls

    together, alone, jobs = run_blocking(main)
    assert calls == [[0, 1, 2, 3, 4, 5], [8]]
    assert jobs == 2
    assert [r if not isinstance(r, Exception) else str(r) for r in together] == [
        0,
        "item 1",
        20,
        "item 3",
        40,
        "item 5",
    ]
    assert alone == 80


@pytest.mark.django_db
def test_grouped_updates_write_each_rows_own_values_without_a_case_per_row():
    run = EvaluationRunFactory(status=RunStatus.RUNNING)
    scenario = ScenarioFactory()
    rows = [
        ConversationFactory(run=run, scenario=scenario, target=run.targets.first(), replicate=r)
        for r in range(12)
    ]
    bystander = ConversationFactory(
        run=run, scenario=scenario, target=run.targets.first(), replicate=99
    )
    now = timezone.now()
    for i, row in enumerate(rows):
        row.stopped_early = i % 3 == 0
        row.stop_reason = f"reason {i % 3}"
        row.simulated_at = now
        row.error = "not written"  # not among the fields
    with CaptureQueriesContext(connection) as queries:
        statements = update_grouped(
            Conversation, rows, ["stopped_early", "stop_reason", "simulated_at"]
        )
    assert statements == 3 == len(queries)
    assert not any("CASE" in q["sql"] for q in queries)
    stored = {c.pk: c for c in Conversation.objects.filter(run=run)}
    for i, row in enumerate(rows):
        got = stored[row.pk]
        assert (got.stopped_early, got.stop_reason, got.simulated_at) == (
            i % 3 == 0,
            f"reason {i % 3}",
            now,
        )
        assert got.error == ""
    assert stored[bystander.pk].simulated_at is None
    # An expression is not a value to group by: those rows go through bulk_update.
    rows[0].replicate = F("replicate") + 100
    update_grouped(Conversation, rows[:2], ["replicate"])
    assert Conversation.objects.get(pk=rows[0].pk).replicate == 100


@pytest.mark.django_db
def test_closing_many_conversations_writes_them_in_a_few_statements(three):
    run, conversations, claims = three
    for conversation in conversations:
        _judge(conversation, [True, True, False])
    with CaptureQueriesContext(connection) as queries:
        outcomes = conversations_finalize(list(zip(conversations, claims, strict=True)))
    assert all(isinstance(o, Conversation) for o in outcomes)
    updates = [
        q["sql"] for q in queries if q["sql"].startswith('UPDATE "evaluations_conversation"')
    ]
    assert len(updates) == 1
    assert "CASE" not in updates[0]
    assert set(Conversation.objects.filter(run=run).values_list("status", "verdict_present")) == {
        (ConversationStatus.COMPLETED, True)
    }
