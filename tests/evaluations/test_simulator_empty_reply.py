"""An empty simulated-user message: a failed reply to re-ask, not a turn or a lost conversation."""

import pytest

from evaluations.models import Conversation, ConversationStatus, FailureKind, Turn
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall
from tests.evaluations.factories import (
    running_run,
)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _told_it_was_empty(request) -> bool:
    return "message is empty" in str(request.messages[-1]["content"])


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_an_empty_message_is_asked_again_and_the_conversation_completes(fake_models, blank):
    def simulator(request, index):
        # Every first answer is blank; the re-ask, which names the problem, gets a message.
        if _told_it_was_empty(request):
            return {"message": "I still need help with this."}
        return {"message": blank}

    fake_models.simulator_reply = simulator
    run = running_run(fake_models, conversations=2)

    runs.run_process_inline(run_id=run.pk)

    run.refresh_from_db()
    assert (run.conversations_completed, run.conversations_failed) == (2, 0)
    texts = list(
        Turn.objects.filter(conversation__run=run).values_list("user_text_clean", flat=True)
    )
    assert len(texts) == 4
    assert all(text == "I still need help with this." for text in texts)
    # Each blank reply is in the call log as a malformed attempt, paid for and counted.
    simulator_calls = LLMCall.objects.filter(run_id=run.pk, purpose="evaluations.simulate_user")
    assert simulator_calls.filter(outcome=CallOutcome.INVALID_OUTPUT).count() == 4
    assert simulator_calls.count() == len(fake_models.requests_to("sim")) == 8


def test_a_simulator_that_never_writes_fails_its_conversation_with_the_reason(fake_models):
    fake_models.simulator_reply = lambda request, index: {"message": ""}
    run = running_run(fake_models, conversations=1)

    runs.run_process_inline(run_id=run.pk)

    conversation = Conversation.objects.get(run=run)
    assert conversation.status == ConversationStatus.FAILED
    assert conversation.failure_kind == FailureKind.SIMULATOR_ERROR
    assert "did not return a valid SimulatedUserTurn" in conversation.error
    assert "message is empty" in conversation.error
    assert not Turn.objects.filter(conversation=conversation).exists()


def test_a_user_who_ends_the_conversation_may_leave_the_message_empty(fake_models):
    # Stopping is allowed after the first turn (and after every anchor: this run plays none);
    # the message of a stop may be empty, as nothing is sent.
    def simulator(request, index):
        if index == 1:
            return {"message": "Hello, I need advice."}
        return {"message": "", "stop": True, "stop_reason": "Got what I needed."}

    fake_models.simulator_reply = simulator
    run = running_run(fake_models, conversations=1, use_anchors=False)

    runs.run_process_inline(run_id=run.pk)

    conversation = Conversation.objects.get(run=run)
    assert conversation.status == ConversationStatus.COMPLETED
    assert Turn.objects.filter(conversation=conversation).count() == 1
    simulator_calls = LLMCall.objects.filter(run_id=run.pk, purpose="evaluations.simulate_user")
    assert not simulator_calls.filter(outcome=CallOutcome.INVALID_OUTPUT).exists()
