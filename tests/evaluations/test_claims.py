"""Claims on work items: leases, fencing tokens, the reaper, and the run's health checks."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from evaluations.models import Conversation, ConversationStatus, Judgment, RunStatus, Turn
from evaluations.services import reaper, runs
from evaluations.services.claims import (
    ClaimLost,
    claim_fence,
    claim_release,
    claim_take,
    claims_renew,
    claims_take,
)
from evaluations.services.judging import conversation_finalize
from evaluations.services.simulation import conversation_simulate
from llm.models import CallOutcome, LLMCall
from tests.evaluations.factories import (
    ConversationFactory,
    EvaluationRunFactory,
    ScenarioFactory,
    running_run,
)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]
BATCH = "evaluations.tasks.llm_process_batch"


@pytest.fixture
def conversation():
    return ConversationFactory(run=EvaluationRunFactory(status=RunStatus.RUNNING))


def expire(pk: int) -> None:
    Conversation.objects.filter(pk=pk).update(lease_expires_at=timezone.now() - timedelta(1))


def test_a_live_claim_is_refused_and_an_expired_one_taken_over(conversation):
    first = claim_take(Conversation, pk=conversation.pk, worker="a@host")
    assert first is not None
    assert first.token == 1
    assert claim_take(Conversation, pk=conversation.pk, worker="b@host") is None
    expire(conversation.pk)
    second = claim_take(Conversation, pk=conversation.pk, worker="b@host")
    assert second is not None
    assert second.token == 2
    conversation.refresh_from_db()
    assert (conversation.claimed_by, conversation.attempts) == ("b@host", 2)


def test_the_fence_stops_a_delivery_whose_claim_was_taken_over(conversation):
    stale = claim_take(Conversation, pk=conversation.pk)
    expire(conversation.pk)
    current = claim_take(Conversation, pk=conversation.pk)
    with pytest.raises(ClaimLost), claim_fence(stale):
        Turn.objects.create(conversation=conversation, index=1, user_text="x", assistant_text="y")
    assert not Turn.objects.filter(conversation=conversation).exists()
    with claim_fence(current):
        pass  # the holder passes and renews its lease
    assert claims_renew([stale, current]) == [stale]


def test_a_stale_claim_cannot_simulate_or_finalize(conversation):
    stale = claim_take(Conversation, pk=conversation.pk)
    expire(conversation.pk)
    claim_take(Conversation, pk=conversation.pk)
    with pytest.raises(ClaimLost):
        conversation_simulate(conversation=conversation, claim=stale)
    with pytest.raises(ClaimLost):
        conversation_finalize(conversation=conversation, claim=stale)
    # The one offline model call it made is in the call log, attributed to attempt 1.
    assert set(
        LLMCall.objects.filter(work_item=f"conversation:{conversation.pk}").values_list(
            "claim", flat=True
        )
    ) == {1}


def test_a_released_claim_goes_back_to_pending(conversation):
    claim = claim_take(Conversation, pk=conversation.pk)
    assert claim_release(claim)
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.PENDING
    assert conversation.lease_expires_at is None


def test_the_reaper_hands_out_expired_claims_and_closes_finished_runs(conversation, sent_tasks):
    live = ConversationFactory(run=conversation.run, scenario=ScenarioFactory())
    claim_take(Conversation, pk=conversation.pk)
    claim_take(Conversation, pk=live.pk)
    Conversation.objects.filter(pk=live.pk).update(dispatched_at=timezone.now())
    expire(conversation.pk)

    report = reaper.runs_reap()
    assert (report.expired, sent_tasks.ids(BATCH)) == (1, [conversation.pk])
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.PENDING
    assert Conversation.objects.get(pk=live.pk).status == ConversationStatus.RUNNING

    Conversation.objects.filter(run=conversation.run).update(status=ConversationStatus.COMPLETED)
    assert reaper.runs_reap().closed == 1
    conversation.run.refresh_from_db()
    assert conversation.run.status == RunStatus.COMPLETED


def test_the_reaper_resends_pending_items_whose_message_may_be_lost(
    conversation, sent_tasks, settings
):
    settings.RUN_REDISPATCH_AFTER_SECONDS = 60
    Conversation.objects.filter(pk=conversation.pk).update(dispatched_at=timezone.now())
    assert reaper.runs_reap().redispatched == 0
    Conversation.objects.filter(pk=conversation.pk).update(
        dispatched_at=timezone.now() - timedelta(seconds=61)
    )
    assert reaper.runs_reap().redispatched == 1
    assert sent_tasks.ids(BATCH) == [conversation.pk]


def test_an_authentication_error_pauses_the_target_for_the_run(fake_models, settings):
    from tests.fake_openai import Behaviour

    # One conversation in flight at a time, so the pause is seen before the next one starts
    # (conversations already in flight when it is decided make their call).
    settings.ENGINE_CONCURRENCY = 1
    plain = fake_models.target_reply
    fake_models.target_reply = lambda request: Behaviour(status=401)
    run = running_run(fake_models, scenario_each=True, conversations=3)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED  # no conversation could complete
    reason = run.paused_configurations[str(fake_models.target.pk)]
    assert "authentication failed (HTTP 401)" in reason
    # One target call was refused; the other conversations failed with the reason, uncalled.
    assert len(fake_models.requests_to("target")) == 1
    errors = set(run.conversations.values_list("error", flat=True))
    assert reason in errors
    fake_models.target_reply = plain


def test_persistent_errors_pause_the_target(fake_models, settings):
    from tests.fake_openai import Behaviour

    settings.LLM_MAX_RETRIES = 1
    settings.RUN_PAUSE_AFTER_ERRORS = 4
    settings.ENGINE_CONCURRENCY = 1  # in order: the pause is seen before the next one starts
    fake_models.target_reply = lambda request: Behaviour(status=503)
    run = running_run(fake_models, scenario_each=True, conversations=4)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert (
        "its last 4 calls in this run all failed"
        in run.paused_configurations[str(fake_models.target.pk)]
    )
    # Two conversations spent their two attempts each; the rest were never sent.
    assert len(fake_models.requests_to("target")) == 4
    assert LLMCall.objects.filter(run_id=run.pk, outcome=CallOutcome.HTTP_ERROR).count() == 4


def test_the_spending_cap_pauses_the_run_and_says_so(fake_models, settings):
    # The cap is checked when a conversation starts; one at a time, so the second one sees it.
    settings.ENGINE_CONCURRENCY = 1
    fake_models.target.price_per_million_input_tokens = Decimal("1000")
    fake_models.target.save()
    run = running_run(
        fake_models, scenario_each=True, conversations=3, spending_cap=Decimal("0.01")
    )
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED
    assert run.halt_reason.startswith("Stopped at the spending cap")
    # The first conversation ran; the cap stopped the others before any call.
    assert run.conversations.filter(status=ConversationStatus.COMPLETED).count() == 1
    assert run.conversations.filter(status=ConversationStatus.PENDING).count() == 2


def test_launch_is_refused_when_the_estimate_exceeds_the_cap(fake_models):
    from core.exceptions import ApplicationError
    from tests.evaluations.test_run_worker import release_with_scenarios

    fake_models.target.price_per_million_input_tokens = Decimal("100")
    fake_models.target.save()
    run = runs.run_create(
        name="Capped",
        release=release_with_scenarios(1),
        targets=[fake_models.target],
        simulator=fake_models.simulator,
        judge=fake_models.judge,
        spending_cap=Decimal("0.01"),
    )
    with pytest.raises(ApplicationError, match="exceeds this run's spending cap of \\$0.01"):
        runs.run_launch(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.DRAFT
    assert not run.conversations.exists()


def _other_connection():
    """A second PostgreSQL session on the test database, to see which rows a transaction locks."""
    import psycopg
    from django.db import connection

    params = connection.settings_dict
    return psycopg.connect(
        dbname=params["NAME"],
        user=params["USER"],
        host=params["HOST"] or None,
        port=params["PORT"] or None,
        password=params["PASSWORD"] or None,
        autocommit=True,
    )


def _assert_locks_only_the_conversation(conversation: Conversation) -> None:
    import psycopg

    with _other_connection() as other:
        # Another worker's foreign-key check on the run (FOR KEY SHARE) must not wait: a FOR
        # UPDATE of the joined run row deadlocked two workers' commits.
        for table, pk in (
            ("evaluations_evaluationrun", conversation.run_id),
            ("evaluations_scenario", conversation.scenario_id),
            ("llm_modelconfiguration", conversation.target_id),
        ):
            other.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR KEY SHARE NOWAIT", [pk])  # noqa: S608
        # ... while the conversation itself is locked.
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute(
                "SELECT 1 FROM evaluations_conversation WHERE id = %s FOR UPDATE NOWAIT",
                [conversation.pk],
            )


@pytest.mark.slow(reason="waits on row locks held by another connection")
@pytest.mark.django_db(transaction=True)
def test_claiming_renewing_and_finalizing_lock_only_the_conversation():
    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's; SQLite locks the whole database")
    conversation = ConversationFactory(run=EvaluationRunFactory(status=RunStatus.RUNNING))
    with transaction.atomic():
        claim = claims_take(Conversation, pks=[conversation.pk], worker="a@host")[conversation.pk]
        _assert_locks_only_the_conversation(conversation)
    with transaction.atomic():
        assert claims_renew([claim]) == []
        _assert_locks_only_the_conversation(conversation)
    for repetition in range(conversation.run.judgments_per_conversation):
        Judgment.objects.create(
            conversation=conversation,
            repetition=repetition,
            judge=conversation.run.judge,
            seed=repetition,
            present=True,
            justification="Present.",
        )
    with transaction.atomic():
        conversation_finalize(conversation=conversation, claim=claim)
        _assert_locks_only_the_conversation(conversation)
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.COMPLETED
