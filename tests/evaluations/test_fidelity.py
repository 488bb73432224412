"""The fidelity check: asked of the run's checker with the brief and the whole transcript, stored
per conversation with its evidence, repeats counted by rule, unusable output left unchecked."""

import json

import pytest

from evaluations.engine import process_conversations
from evaluations.models import Conversation, ConversationStatus, FidelityReading, Scenario, Turn
from evaluations.services.fidelity import (
    REASON_LIMIT,
    conversation_fidelity_check,
    repeated_lines,
    whole_sentences,
)
from evaluations.services.processing import conversation_process
from evaluations.services.simulation import conversation_simulate
from llm.models import LLMCall, ModelRole
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory
from tests.fake_openai import Behaviour, is_check
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.django_db

CRITERIA = ["persona", "goal", "fresh", "in_character", "responsive"]


def _answers(**held) -> dict:
    return {
        "criteria": [
            {
                "criterion": c,
                "held": held.get(c, True),
                "turn": 2,
                "quote": "user message 2",
                "reason": f"{c} as read.",
            }
            for c in CRITERIA
        ]
    }


def _running(conversation: Conversation) -> int:
    conversation.run.status = "running"
    conversation.run.save(update_fields=["status"])
    return conversation.pk


def _fidelity_requests(fake_models, model: str = "judge") -> list:
    return [
        r
        for r in fake_models.requests_to(model)
        if "<fidelity_transcript>" in r.messages[-1]["content"]
    ]


def test_the_engine_asks_the_judge_with_the_brief_and_stores_the_reading(fake_models):
    run = EvaluationRunFactory(
        simulator=fake_models.simulator,
        judge=fake_models.judge,
        targets=[fake_models.target],
        typo_rate=0.0,
        turns=3,
        judgments_per_conversation=1,
        status="running",
    )
    conversation = ConversationFactory(run=run, scenario=ScenarioFactory(), target=run.judge)
    conversation.target = fake_models.target
    conversation.save()
    fake_models.fidelity_reply = lambda request: _answers(goal=False)
    report = process_conversations([conversation.pk], inline=True)
    assert report.completed == 1

    [request] = _fidelity_requests(fake_models)
    prompt = request.messages[-1]["content"]
    scenario = conversation.scenario
    # The checker, unlike the judge, reads the hidden goal and the persona, fenced as data.
    assert f"<hidden_goal>\n{scenario.latent_adversarial_goal}\n</hidden_goal>" in prompt
    assert scenario.persona["name"] in prompt
    assert "the user is an adult aged" in prompt
    assert "[Turn 3] User: user message 3" in prompt
    assert "[Turn 2] Assistant: assistant reply" in prompt
    assert request.param("response_format")["type"] == "json_schema"

    reading = FidelityReading.objects.get(conversation=conversation)
    assert reading.checker == fake_models.judge
    assert (reading.persona_held, reading.goal_held, reading.passed) == (True, False, False)
    assert reading.held_count == 4
    assert [e["criterion"] for e in reading.criteria] == CRITERIA
    assert all(e["found"] and e["turn"] == 2 for e in reading.criteria)
    assert reading.criteria[1]["reason"] == "goal as read."
    call = LLMCall.objects.get(pk__in=reading.call_ids)
    assert (call.purpose, call.role) == ("evaluations.fidelity_check", ModelRole.FIDELITY_CHECKER)
    # Processing the conversation again asks nothing more.
    conversation.refresh_from_db()
    assert conversation.status == ConversationStatus.COMPLETED


def test_a_named_checker_checks_instead_of_the_judge(fake_models, fake_conversation):
    checker = ModelConfigurationFactory(
        model_id="checker", base_url=fake_models.judge.base_url, provider="openai_compatible"
    )
    plain = fake_models.respond

    def respond(request):
        if request.model == "checker":
            return _answers()
        return plain(request)

    fake_models.server.responder = respond
    run = fake_conversation.run
    run.fidelity_checker = checker
    run.save()
    conversation_simulate(conversation=fake_conversation)
    reading = conversation_fidelity_check(conversation=fake_conversation)
    assert reading.checker == checker
    assert reading.passed
    assert not _fidelity_requests(fake_models)
    assert len(fake_models.requests_to("checker")) == 1
    # Stored once: a second check returns it without a call.
    assert conversation_fidelity_check(conversation=fake_conversation) == reading
    assert len(fake_models.requests_to("checker")) == 1


def test_a_repeated_user_line_fails_fresh_whatever_the_checker_said(fake_models, fake_conversation):
    lines = {1: "first thing", 2: "So, what now?", 3: "something new", 4: "so what now"}
    fake_models.simulator_reply = lambda request, index: {"message": lines.get(index, f"m{index}")}
    conversation_simulate(conversation=fake_conversation)
    reading = conversation_fidelity_check(conversation=fake_conversation)
    assert reading.repeated_lines == 1
    assert not reading.fresh_held
    assert not reading.passed
    fresh = reading.criteria[2]
    assert (fresh["turn"], fresh["quote"], fresh["found"]) == (4, "so what now", True)
    assert "repeats an earlier user turn" in fresh["reason"]
    # The other criteria keep the checker's answers.
    assert reading.persona_held
    assert reading.goal_held
    assert reading.responsive_held


def test_quotes_are_verified_against_the_user_turn_they_name(fake_models, fake_conversation):
    def answers(request):
        reply = _answers(persona=False)
        reply["criteria"][0].update(turn=2, quote="words the user never wrote")
        reply["criteria"][1].update(turn=9, quote="user message 2")  # no turn 9
        reply["criteria"][2].update(turn=2, quote="assistant reply 4")  # not the user's words
        return reply

    fake_models.fidelity_reply = answers
    conversation_simulate(conversation=fake_conversation)
    reading = conversation_fidelity_check(conversation=fake_conversation)
    found = [(e["turn"], e["found"]) for e in reading.criteria]
    assert found == [(2, False), (None, False), (2, False), (2, True), (2, True)]


def test_an_unanswered_criterion_does_not_hold(fake_models, fake_conversation):
    def answers(request):
        reply = _answers()
        reply["criteria"] = [c for c in reply["criteria"] if c["criterion"] != "responsive"]
        return reply

    fake_models.fidelity_reply = answers
    conversation_simulate(conversation=fake_conversation)
    reading = conversation_fidelity_check(conversation=fake_conversation)
    assert not reading.responsive_held
    assert not reading.passed
    assert reading.criteria[4]["reason"] == "The checker gave no answer for this criterion."


def test_unusable_checker_output_leaves_the_conversation_unchecked_not_failed(
    fake_models, fake_conversation, settings
):
    settings.LLM_MAX_RETRIES = 0
    plain = fake_models.respond

    def respond(request):
        if is_check(request) and "<fidelity_transcript>" in request.messages[-1]["content"]:
            return Behaviour(content="not json at all")
        return plain(request)

    fake_models.server.responder = respond
    conversation = conversation_process(conversation_id=_running(fake_conversation))
    assert conversation.status == ConversationStatus.COMPLETED
    assert not FidelityReading.objects.filter(conversation=conversation).exists()
    # Every attempt is in the call log, with the reason it was unusable.
    attempts = LLMCall.objects.filter(purpose="evaluations.fidelity_check")
    assert attempts.exists()
    assert all(a.outcome != "success" for a in attempts)


def test_the_per_conversation_task_checks_fidelity_too(fake_models, fake_conversation):
    conversation = conversation_process(conversation_id=_running(fake_conversation))
    assert conversation.status == ConversationStatus.COMPLETED
    assert FidelityReading.objects.get(conversation=conversation).passed


def test_repeats_are_counted_ignoring_case_spacing_and_punctuation():
    texts = ["Hi there", "what should I do?", "What  should i do", "hi, there!", "new"]
    turns = [Turn(index=i, user_text_clean=t) for i, t in enumerate(texts, start=1)]
    assert repeated_lines(turns) == [3, 4]
    assert repeated_lines([Turn(index=1, user_text_clean="")] * 2) == []


@pytest.mark.parametrize(
    "text",
    [
        "One. " * 400,
        "A sentence that is long " * 80 + ". Then another.",
        "Short and whole.",
        "¿Qué hago ahora? " * 120,
    ],
)
def test_reasons_are_never_cut_mid_sentence(text):
    kept = whole_sentences(text)
    assert len(kept) <= REASON_LIMIT + 2
    normal = " ".join(text.split())
    if len(normal) <= REASON_LIMIT:
        assert kept == normal
    else:
        assert kept.endswith((".", "?", "!", "…"))
        assert normal.startswith(kept.removesuffix(" …"))


def test_the_offline_demo_run_checks_every_conversation():
    conversation = ConversationFactory()
    conversation_process(conversation_id=_running(conversation))
    reading = FidelityReading.objects.get(conversation=conversation)
    assert reading.is_offline
    assert reading.checker == conversation.run.judge
    assert [e["criterion"] for e in reading.criteria] == CRITERIA
    assert all(e["reason"] for e in reading.criteria)
    assert Conversation.objects.get(pk=conversation.pk).status == ConversationStatus.COMPLETED
    json.dumps(reading.criteria)  # stored as plain JSON
    assert isinstance(Scenario.objects.get(pk=conversation.scenario_id).persona, dict)


def test_the_checker_is_named_on_the_command_line_or_by_its_role(fake_models):
    from evaluations.services.run_setup import run_create_from_names
    from llm.models import ModelRoleAssignment
    from tests.metrics_registry.factories import MetricFactory

    metric = MetricFactory()
    names = {"target_names": [fake_models.target.name], "metric_keys": [metric.key]}
    common = {"simulator_name": fake_models.simulator.name, "judge_name": fake_models.judge.name}
    run = run_create_from_names(**names, **common, name="plain")
    assert run.fidelity_checker is None  # the judge checks
    checker = ModelConfigurationFactory(model_id="checker")
    named = run_create_from_names(**names, **common, name="n", fidelity_checker_name=checker.name)
    assert named.fidelity_checker == checker
    ModelRoleAssignment.objects.create(
        role=ModelRole.FIDELITY_CHECKER, configuration=checker, is_default=True
    )
    assert run_create_from_names(**names, **common, name="r").fidelity_checker == checker
