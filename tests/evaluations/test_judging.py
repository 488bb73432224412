import itertools
import json

import pytest

from core.exceptions import ApplicationError
from evaluations.models import ConversationStatus, Judgment
from evaluations.services.closing import verdict_passed
from evaluations.services.judging import conversation_finalize, conversation_judge, quote_found
from evaluations.services.simulation import conversation_simulate
from tests.evaluations.factories import (
    ConversationFactory,
    EvaluationRunFactory,
    ScenarioFactory,
    current_version,
)
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


def verdict(present: bool, *evidence: tuple[int, str], shows: str | None = None) -> dict:
    """A judge's reply; each quote labelled as showing what the verdict says unless `shows`."""
    label = shows or ("behaviour_shown" if present else "behaviour_missing")
    return {
        "present": present,
        "justification": "Reasoned.",
        "evidence": [{"turn": t, "quote": q, "shows": label} for t, q in evidence],
    }


def test_three_judgments_stored_majority_decides_and_quotes_are_checked(
    fake_models, fake_conversation
):
    fake_models.judge_replies = iter(
        [
            verdict(True, (2, "Assistant   REPLY 4: weigh both OPTIONS")),
            verdict(False, (2, "words nobody wrote")),  # not in the transcript: re-asked
            verdict(
                False, (2, "assistant reply 4: weigh both options carefully")
            ),  # ...and verified the second time
            verdict(True, (9, "user message 1")),  # no turn 9: re-asked
            verdict(True, (1, "user message 1")),  # the user's words are no evidence: flagged
        ]
    )
    conversation_simulate(conversation=fake_conversation)
    judgments = conversation_judge(conversation=fake_conversation)
    assert len(fake_models.requests_to("judge")) == 5
    assert [j.repetition for j in judgments] == [0, 1, 2]
    assert len({j.seed for j in judgments}) == 3  # distinct seeds: the cache cannot merge them
    assert [j.present for j in judgments] == [True, False, True]
    assert [e["found_in_transcript"] for e in judgments[0].evidence] == [True]
    assert [j.reasked_for_evidence for j in judgments] == [False, True, True]
    assert [j.has_unverified_quotes for j in judgments] == [False, False, True]
    assert [j.evidence_status for j in judgments] == ["supported", "supported", "unverified"]
    assert judgments[2].evidence[0]["speaker"] == "user"
    # The verdict before each re-ask is kept (neither re-ask changed it here).
    assert [j.present_before_reask for j in judgments] == [None, False, True]
    # The re-ask names the quotes that were not found.
    reask = fake_models.requests_to("judge")[2].messages[-1]["content"]
    assert "words nobody wrote" in reask
    assert len(judgments[1].call_ids) == 2

    conversation = conversation_finalize(conversation=fake_conversation)
    assert conversation.status == ConversationStatus.COMPLETED
    assert conversation.verdict_present is True
    assert conversation.judgments_present == 2
    assert conversation.verdict_passed is True  # positive metric, behaviour present
    assert conversation.unverified_evidence is True  # flagged for the conversation page
    assert conversation.run.conversations_completed == 0  # in-memory; reload:
    conversation.run.refresh_from_db()
    assert conversation.run.conversations_completed == 1
    # Idempotent: judging and finalizing again changes nothing.
    requests = fake_models.server.request_count
    conversation_judge(conversation=conversation)
    conversation_finalize(conversation=conversation)
    assert fake_models.server.request_count == requests
    assert Judgment.objects.filter(conversation=conversation).count() == 3
    conversation.run.refresh_from_db()
    assert conversation.run.conversations_completed == 1


def test_judge_sees_rubric_and_transcript_but_not_the_hidden_goal_or_persona(
    fake_models, fake_conversation
):
    conversation_simulate(conversation=fake_conversation)
    conversation_judge(conversation=fake_conversation)
    requests = fake_models.requests_to("judge")
    assert len(requests) == 3
    scenario = fake_conversation.scenario
    for request in requests:
        prompt = json.dumps(request.messages)
        assert scenario.latent_adversarial_goal not in prompt
        assert "SECRET-LATENT" not in prompt
        assert scenario.persona["name"] not in prompt
        assert scenario.metric_version.criterion in prompt
        assert "Polarity: positive" in prompt
        assert scenario.failure_condition in prompt
        assert "[Turn 8] Assistant: assistant reply 16" in prompt


def test_a_negative_metric_passes_when_the_behaviour_is_absent(fake_models):
    version = current_version(MetricFactory(polarity="negative"))
    run = EvaluationRunFactory(
        simulator=fake_models.simulator, judge=fake_models.judge, targets=[fake_models.target]
    )
    conversation = ConversationFactory(
        run=run, scenario=ScenarioFactory(metric_version=version), target=fake_models.target
    )
    fake_models.judge_replies = itertools.cycle([verdict(False), verdict(False), verdict(True)])
    conversation_simulate(conversation=conversation)
    conversation_judge(conversation=conversation)
    conversation = conversation_finalize(conversation=conversation)
    assert conversation.verdict_present is False
    assert conversation.verdict_passed is True


def test_finalize_refuses_before_all_judgments_are_in(fake_models, fake_conversation):
    conversation_simulate(conversation=fake_conversation)
    with pytest.raises(ApplicationError, match="0 of its 3 judgments"):
        conversation_finalize(conversation=fake_conversation)


def test_pass_follows_polarity():
    assert verdict_passed(present=True, polarity="positive") is True
    assert verdict_passed(present=False, polarity="positive") is False
    assert verdict_passed(present=True, polarity="negative") is False
    assert verdict_passed(present=False, polarity="negative") is True


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("I’m not sure", True),
        ("  i'm   NOT sure ", True),
        ('"leave the job"', True),
        ("I'm not … the job", True),
        ("the job ... I'm not", False),
        ("quit now", False),
        ("...", False),
    ],
)
def test_quote_matching_ignores_case_spacing_and_typographic_quotes(quote, found):
    assert quote_found(quote, "Well, I'm not sure you should leave the job yet.") is found


def test_offline_judging_end_to_end():
    conversation = ConversationFactory()
    conversation_simulate(conversation=conversation)
    judgments = conversation_judge(conversation=conversation)
    assert len(judgments) == 3
    assert all(j.is_offline for j in judgments)
    conversation = conversation_finalize(conversation=conversation)
    assert conversation.verdict_present is not None
    assert conversation.is_offline


def test_an_unreadable_evidence_reask_keeps_the_first_reading_flagged(
    fake_models, fake_conversation, settings
):
    unreadable = ["not a verdict"] * ((1 + settings.LLM_STRUCTURED_REASKS) * 2)
    fake_models.judge_replies = iter(
        [verdict(True, (1, "words nobody wrote")), *unreadable]
        + [verdict(True, (2, "assistant reply 4: weigh both options carefully"))] * 2
    )
    conversation_simulate(conversation=fake_conversation)
    judgments = conversation_judge(conversation=fake_conversation)
    first = judgments[0]
    assert first.present is True
    assert first.reasked_for_evidence
    assert first.has_unverified_quotes
    assert first.evidence[0]["quote"] == "words nobody wrote"
    assert [j.has_unverified_quotes for j in judgments[1:]] == [False, False]
