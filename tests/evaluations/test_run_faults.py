"""Runs under faults the gateway sees: malformed 200s, duplicate deliveries, paused models."""

import pytest

from evaluations.models import ConversationStatus, Turn
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory
from tests.fake_openai import Behaviour

pytestmark = pytest.mark.django_db


def test_a_run_never_stores_an_empty_turn_from_a_malformed_200(provider_models, settings):
    """Every fourth target reply is a 200 without choices; each is retried, none is stored."""
    settings.LLM_MAX_RETRIES = 2
    fake_models = provider_models
    counter = {"n": 0}
    plain = fake_models.target_reply

    def flaky(request):
        counter["n"] += 1
        if counter["n"] % 4 == 0:
            return Behaviour(malformed="no_choices")
        return plain(request)

    fake_models.target_reply = flaky
    run = EvaluationRunFactory(
        simulator=fake_models.simulator,
        judge=fake_models.judge,
        targets=[fake_models.target],
        typo_rate=0.0,
        turns=4,
        judgments_per_conversation=1,
        status="running",
    )
    conversations = [
        ConversationFactory(run=run, scenario=ScenarioFactory(), target=fake_models.target)
        for _ in range(2)
    ]
    runs.run_process_inline(run_id=run.pk)
    for conversation in conversations:
        conversation.refresh_from_db()
        assert conversation.status == ConversationStatus.COMPLETED
    texts = list(
        Turn.objects.filter(conversation__run=run).values_list("assistant_text", flat=True)
    )
    assert len(texts) == 8
    assert all(text.strip() for text in texts)
    malformed = LLMCall.objects.filter(run_id=run.pk, outcome=CallOutcome.MALFORMED).count()
    assert malformed == counter["n"] // 4 > 0
