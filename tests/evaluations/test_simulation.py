import json

import pytest

from core.exceptions import ApplicationError
from evaluations.models import Turn
from evaluations.selectors import run_usage
from evaluations.services.simulation import conversation_simulate
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory
from tests.fake_openai import Behaviour

pytestmark = pytest.mark.django_db


def test_offline_conversation_has_eight_turns_with_anchors_at_their_turns():
    run = EvaluationRunFactory(typo_rate=0.3)
    conversation = conversation_simulate(conversation=ConversationFactory(run=run))
    turns = list(conversation.turns.order_by("index"))
    assert [t.index for t in turns] == list(range(1, 9))
    # The factory's anchors are due at turns 1, 3 and 5.
    assert {t.index: t.anchor_index for t in turns if t.anchor_index is not None} == {
        1: 0,
        3: 1,
        5: 2,
    }
    assert conversation.anchors_carried == [0, 1, 2]
    assert conversation.simulated_at is not None
    assert not conversation.stopped_early
    assert conversation.is_offline
    assert any(t.user_text != t.user_text_clean for t in turns)  # typos at rate 0.3
    # Usage comes from the call log, where every call is attributed to the conversation.
    usage = run_usage(run_id=run.pk, work_item=f"conversation:{conversation.pk}")
    assert (usage.attempts, usage.successes, usage.failures) == (16, 16, 0)
    assert usage.prompt_tokens > 0


def test_target_sees_only_the_dialogue_and_its_own_system_prompt(fake_models, fake_conversation):
    scenario = fake_conversation.scenario
    conversation_simulate(conversation=fake_conversation)
    target_requests = fake_models.requests_to("target")
    assert len(target_requests) == 8
    hidden = [
        scenario.latent_adversarial_goal,
        scenario.persona["name"],
        scenario.persona["background"],
        scenario.user_goal,
        scenario.failure_condition,
        scenario.metric_version.criterion,
        scenario.metric_version.name,
        *[anchor["text"] for anchor in scenario.anchors],
    ]
    for request in target_requests:
        assert request.messages[0] == {"role": "system", "content": "You are Acme's helper."}
        assert [m["role"] for m in request.messages[1:]][-1] == "user"
        sent = json.dumps(request.body)
        for secret in hidden:
            assert secret not in sent
    last = target_requests[-1].messages
    assert [m["content"] for m in last if m["role"] == "user"] == [
        f"user message {i}" for i in range(1, 9)
    ]


def test_simulator_gets_the_persona_goals_and_the_anchor_due_at_each_turn(
    fake_models, fake_conversation
):
    conversation_simulate(conversation=fake_conversation)
    requests = fake_models.requests_to("sim")
    assert len(requests) == 8
    system = requests[0].messages[0]["content"]
    assert fake_conversation.scenario.latent_adversarial_goal in system
    assert '"name": "Dana"' in system
    assert "Due now: anchor 1: Mention the salary is 20% higher." in system
    assert "Due now" not in requests[1].messages[0]["content"]
    assert "Due now: anchor 2: Say your partner" in requests[2].messages[0]["content"]
    # From the user's side: its own messages are "assistant", the target's replies are "user".
    third = requests[2].messages
    assert [m["role"] for m in third[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert third[2]["content"] == "user message 1"


def test_early_stop_only_after_the_anchors_and_with_a_reason(fake_models, fake_conversation):
    def reply(request, index):
        # Asks to stop at turn 2 (anchors still due: ignored) and at turn 6 (honoured).
        if index in (2, 6):
            return {"message": "bye", "stop": True, "stop_reason": "Got an answer."}
        return {"message": f"user message {index}"}

    fake_models.simulator_reply = reply
    conversation = conversation_simulate(conversation=fake_conversation)
    assert conversation.turns.count() == 5
    assert conversation.stopped_early
    assert conversation.stop_reason == "Got an answer."


def test_an_interrupted_conversation_resumes_from_its_last_turn(fake_models, fake_conversation):
    broken = {"on": True}

    def target_reply(request):
        if broken["on"] and len(request.messages) == 1 + 7:  # the 4th user message
            return Behaviour(status=400)
        return f"assistant reply {len(request.messages)}"

    fake_models.target_reply = target_reply
    with pytest.raises(ApplicationError):
        conversation_simulate(conversation=fake_conversation)
    assert list(fake_conversation.turns.values_list("index", flat=True)) == [1, 2, 3]
    first_three = list(fake_conversation.turns.values_list("assistant_text", flat=True))

    broken["on"] = False
    conversation = conversation_simulate(conversation=fake_conversation)
    turns = list(conversation.turns.order_by("index"))
    assert [t.index for t in turns] == list(range(1, 9))
    assert [t.assistant_text for t in turns[:3]] == first_three
    assert Turn.objects.filter(conversation=conversation).count() == 8
    # Re-running a finished simulation makes no call.
    count = fake_models.server.request_count
    conversation_simulate(conversation=conversation)
    assert fake_models.server.request_count == count



def test_a_target_reply_cut_off_at_max_tokens_is_asked_again_with_more_room(
    fake_models, fake_conversation
):
    """Turn 1 is cut off once (the re-ask with twice the limit completes); turn 2 is cut off
    both times and is stored as cut off."""
    from llm.models import LLMCall

    fake_conversation.run.turns = 2
    fake_conversation.run.save()
    limit = fake_models.target.max_tokens
    plain = fake_models.target_reply

    def cut(request):
        first_turn = len(request.messages) <= 2  # system prompt and the first user message
        if request.param("max_tokens") == limit or not first_turn:
            return Behaviour(content="A reply that stops in the mid", finish_reason="length")
        return plain(request)

    fake_models.target_reply = cut
    conversation_simulate(conversation=fake_conversation)
    targets = fake_models.requests_to("target")
    assert [r.param("max_tokens") for r in targets] == [limit, 2 * limit, limit, 2 * limit]
    first, second = Turn.objects.filter(conversation=fake_conversation).order_by("index")
    assert not first.assistant_cut_off
    assert first.assistant_text.startswith("assistant reply")
    assert second.assistant_cut_off
    assert len(first.target_call_ids) == len(second.target_call_ids) == 2
    reasons = LLMCall.objects.filter(pk__in=second.target_call_ids).values_list(
        "finish_reason", flat=True
    )
    assert list(reasons) == ["length", "length"]
