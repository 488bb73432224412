"""A transcript is stored whole or as a prefix, never with a turn missing in its middle.

When the recorder gives a batch up (its write failed WRITE_ATTEMPTS times in a row), the
conversations with rows in it write nothing more under that claim; a stored transcript that
has a gap anyway (written before this rule) resumes from its last complete turn; and a
conversation whose stored turns have a gap is never closed as done.
"""

import time

import pytest
from django.db import OperationalError
from django.db.models import Count
from django.utils import timezone

from evaluations.engine import process_conversations, recorder
from evaluations.models import (
    Conversation,
    ConversationStatus,
    FidelityReading,
    Judgment,
    Turn,
)
from evaluations.services import runs
from evaluations.services.closing import conversations_finalize
from evaluations.services.failures import ConversationFailure, is_permanent
from tests.evaluations.factories import fidelity_reading
from tests.evaluations.test_engine import _run
from tests.evaluations.test_run_worker import _taxonomy  # noqa: F401 - a fixture (used by name)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _indexes(conversation) -> list[int]:
    return list(Turn.objects.filter(conversation=conversation).values_list("index", flat=True))


def test_a_batch_given_up_leaves_its_conversations_a_prefix_and_a_retry_completes_them(
    fake_models, settings, monkeypatch
):
    """Every write of a batch holding the victim's first turn fails (a database cut off) until
    it is given up; meanwhile the conversations go on to their later turns. None of those may
    be stored after the lost one; retried, every conversation completes with every turn."""
    settings.ENGINE_FLUSH_SECONDS = 0.01
    # Replies slower than the three failed writes: the batch is given up during the second
    # turn, and the third is made after it.
    fake_models.server.latency = 0.05
    run = _run(fake_models, conversations=2, turns=3, judgments=1)
    victim = Conversation.objects.filter(run=run).order_by("pk").first()
    write_rows, failures = recorder._write_rows, []

    def cut_off(stores):
        holds_first_turn = any(
            isinstance(row, Turn) and row.conversation_id == victim.pk and row.index == 1
            for step, _claim in stores
            for row in step.rows
        )
        if holds_first_turn and len(failures) < recorder.WRITE_ATTEMPTS:
            failures.append(time.monotonic())
            raise OperationalError("server closed the connection unexpectedly (injected)")
        return write_rows(stores)

    monkeypatch.setattr(recorder, "_write_rows", cut_off)
    conversations = Conversation.objects.filter(run=run).order_by("pk")
    ids = list(conversations.values_list("pk", flat=True))
    report = process_conversations(ids, inline=True)

    assert len(failures) == recorder.WRITE_ATTEMPTS  # given up
    victim.refresh_from_db()
    assert victim.status == ConversationStatus.FAILED
    assert "injected" in victim.error
    # A later turn was made after the first was given up (the target was asked with the
    # second user message) ...
    asked = [r.messages[-1]["content"] for r in fake_models.server.requests]
    assert "user message 2" in asked
    # ... yet each conversation's stored turns are a prefix: none for those whose first turn
    # was given up, all three for any that was not in that batch.
    for conversation in conversations.all():
        stored = _indexes(conversation)
        assert stored == list(range(1, len(stored) + 1))
        if conversation.status == ConversationStatus.FAILED:
            assert stored == []
            assert not Judgment.objects.filter(conversation=conversation).exists()
        else:
            assert (conversation.status, stored) == (ConversationStatus.COMPLETED, [1, 2, 3])
    assert report.failed == conversations.filter(status=ConversationStatus.FAILED).count() >= 1

    runs.run_retry_failed(run=run, dispatch=False)
    process_conversations(ids, inline=True)
    for conversation in conversations.all():
        assert (conversation.status, _indexes(conversation)) == (
            ConversationStatus.COMPLETED,
            [1, 2, 3],
        )


def _gapped(fake_models, *, simulated: bool) -> Conversation:
    """A conversation of a 3-turn run stored with turns 1 and 3 (2 lost), judged and checked."""
    run = _run(fake_models, conversations=1, turns=3, judgments=1)
    conversation = Conversation.objects.get(run=run)
    for index in (1, 3):
        Turn.objects.create(
            conversation=conversation,
            index=index,
            user_text=f"old user {index}",
            user_text_clean=f"old user {index}",
            assistant_text=f"old reply {index}",
        )
    Judgment.objects.create(
        conversation=conversation,
        repetition=0,
        judge=run.judge,
        seed=1,
        present=True,
        justification="Read from a transcript with a turn missing.",
    )
    fidelity_reading(conversation)
    if simulated:
        Conversation.objects.filter(pk=conversation.pk).update(simulated_at=timezone.now())
    return conversation


@pytest.mark.parametrize("simulated", [False, True], ids=["mid-simulation", "marked-simulated"])
def test_a_stored_gap_resumes_from_the_last_complete_turn(fake_models, simulated):
    conversation = _gapped(fake_models, simulated=simulated)
    old_judgment = Judgment.objects.get(conversation=conversation).pk

    assert process_conversations([conversation.pk], inline=True).completed == 1

    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.COMPLETED
    turns = Turn.objects.filter(conversation=conversation).order_by("index")
    assert [t.index for t in turns] == [1, 2, 3]
    # Turn 1 was complete and is kept; 2 and 3 are the simulation's, not the orphan's.
    assert [t.user_text for t in turns][0] == "old user 1"
    assert "old user 3" not in [t.user_text for t in turns]
    # Every reading is of the new transcript.
    assert not Judgment.objects.filter(pk=old_judgment).exists()
    assert Judgment.objects.filter(conversation=conversation).count() == 1
    assert FidelityReading.objects.filter(conversation=conversation).count() == 1


def test_the_one_conversation_path_resumes_from_the_gap_too(fake_models):
    from evaluations.services.simulation import conversation_simulate

    conversation = _gapped(fake_models, simulated=True)
    conversation = conversation_simulate(conversation=conversation)
    assert conversation.simulated_at is not None
    assert _indexes(conversation) == [1, 2, 3]
    assert not Judgment.objects.filter(conversation=conversation).exists()


def test_a_gapped_transcript_is_never_closed_as_done(fake_models):
    """The last guard: judged or not, a conversation with a turn missing is not completed; the
    refusal is retryable (the next delivery resumes at the gap)."""
    conversation = _gapped(fake_models, simulated=True)
    Conversation.objects.filter(pk=conversation.pk).update(status=ConversationStatus.RUNNING)

    (refusal,) = conversations_finalize([(conversation, None)])

    assert isinstance(refusal, ConversationFailure)
    assert not is_permanent(refusal)
    assert "2 of turns 1–3" in refusal.message
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.RUNNING
    shape = Conversation.objects.filter(pk=conversation.pk).annotate(n=Count("turns")).get()
    assert shape.n == 2
