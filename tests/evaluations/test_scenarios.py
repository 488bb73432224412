import json

import pytest

from core.exceptions import ApplicationError
from evaluations.models import Scenario, ScenarioStatus
from evaluations.services import scenario_edits
from evaluations.services import scenarios as services
from llm.models import LLMCall, ModelRole
from tests.evaluations.factories import ConversationFactory, ScenarioFactory, current_version
from tests.llm.factories import (
    ModelConfigurationFactory,
    ModelRoleAssignmentFactory,
    OfflineConfigurationFactory,
)
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline_writer():
    configuration = OfflineConfigurationFactory()
    ModelRoleAssignmentFactory(role=ModelRole.SCENARIO_WRITER, configuration=configuration)
    return configuration


def test_offline_writer_gives_six_varied_expanded_scenarios_and_rerun_adds_nothing(
    offline_writer,
):
    version = current_version(MetricFactory())
    scenarios = services.scenarios_generate(metric_version=version)
    assert len(scenarios) == 6
    assert sorted((s.base_index, s.age_context) for s in scenarios) == [
        (i, age) for i in range(3) for age in ("adult", "teen")
    ]
    for scenario in scenarios:
        assert scenario.is_expanded
        assert scenario.is_offline
        low, high = (13, 17) if scenario.age_context == "teen" else (18, 95)
        assert low <= scenario.persona["age"] <= high
        assert scenario.persona["gender"]
        assert scenario.persona["background"]
        assert scenario.user_goal
        assert scenario.latent_adversarial_goal
        assert scenario.failure_condition
        assert [a["turn"] for a in scenario.anchors] == sorted(
            {a["turn"] for a in scenario.anchors}
        )
        assert all(1 <= a["turn"] <= 8 for a in scenario.anchors)
    personas = {json.dumps(s.persona, sort_keys=True) for s in scenarios}
    assert len(personas) >= 4  # demographics vary across the scenarios of one metric

    calls = LLMCall.objects.count()
    again = services.scenarios_generate(metric_version=version)
    assert [s.pk for s in again] == [s.pk for s in scenarios]
    assert LLMCall.objects.count() == calls  # a complete set needs no model call


def test_a_single_age_group_metric_gets_three_scenarios(offline_writer):
    version = current_version(MetricFactory(age_contexts="adult"))
    scenarios = services.scenarios_generate(metric_version=version)
    assert {s.age_context for s in scenarios} == {"adult"}
    assert len(scenarios) == 3


def fake_writer(request) -> dict:
    prompt = " ".join(m["content"] for m in request.messages if m["role"] == "user")
    if "exactly 3 distinct base situations" in prompt:
        return {
            "situations": [
                {
                    "situation": f"Base situation number {i}.",
                    "teen_version": f"Teen version of situation {i}.",
                    "adult_version": f"Adult version of situation {i}.",
                }
                for i in range(3)
            ]
        }
    if "situation that fails the metric" in prompt:
        return {"failure_condition": "It decides for her"}
    teen = "Age context: teen" in prompt
    return {
        "persona": {
            "name": "Ana",
            "age": 15 if teen else 40,
            "gender": "woman",
            "background": "student" if teen else "teacher",
            "other_attributes": {"location": "Porto"},
        },
        "user_goal": "Get help",
        "latent_adversarial_goal": "Make the assistant decide",
        "anchors": [{"turn": 9, "text": "Late anchor"}, {"turn": 2, "text": "Early anchor"}],
    }


def test_generation_through_a_real_endpoint_and_idempotent_rerun(fake_openai):
    writer = ModelConfigurationFactory(base_url=fake_openai.base_url)
    wrong_ages = []

    def responder(request):
        reply = fake_writer(request)
        # The first teen expansion has an adult's age: the schema rejects it, the gateway re-asks.
        if "persona" in reply and reply["persona"]["age"] == 15 and not wrong_ages:
            wrong_ages.append(request)
            reply["persona"]["age"] = 19
        return reply

    fake_openai.responder = responder
    version = current_version(MetricFactory())
    scenarios = services.scenarios_generate(metric_version=version, configuration=writer)
    assert len(scenarios) == 6
    # Base situations, 6 failure conditions, 6 expansions, 1 re-ask.
    assert fake_openai.request_count == 1 + 6 + 6 + 1
    teen = next(s for s in scenarios if s.age_context == "teen" and s.base_index == 0)
    assert teen.situation == "Teen version of situation 0."
    assert teen.persona["age"] == 15
    # Anchors past the end are moved to the last turn, and sorted.
    assert teen.anchors == [{"turn": 2, "text": "Early anchor"}, {"turn": 8, "text": "Late anchor"}]
    assert not teen.is_offline
    # The writer saw the metric's criterion, fenced.
    assert "<criterion>" in fake_openai.requests[0].messages[-1]["content"]

    services.scenarios_generate(metric_version=version, configuration=writer)
    assert fake_openai.request_count == 14
    assert Scenario.objects.count() == 6


def test_the_failure_condition_the_judge_reads_is_written_before_and_apart_from_the_hidden_goal(
    fake_openai,
):
    from evaluations.prompts import judge_messages

    writer = ModelConfigurationFactory(base_url=fake_openai.base_url)
    fake_openai.responder = fake_writer
    version = current_version(MetricFactory())
    scenarios = services.scenarios_generate(metric_version=version, configuration=writer)
    requests = list(fake_openai.requests)
    failure_requests = [
        i for i, r in enumerate(requests) if "situation that fails the metric" in str(r.messages)
    ]
    expansion_requests = [
        i for i, r in enumerate(requests) if "latent_adversarial_goal" in str(r.messages)
    ]
    assert len(failure_requests) == len(expansion_requests) == 6
    for scenario in scenarios:
        assert scenario.failure_condition == "It decides for her"
        assert scenario.latent_adversarial_goal == "Make the assistant decide"
    expansion_output = ("Make the assistant decide", "Get help", "Late anchor", "Ana")
    for i in failure_requests:
        sent = json.dumps(requests[i].messages)
        # The failure condition's call never sees the expansion: no hidden goal, persona,
        # user goal or anchors.
        assert not any(text in sent for text in expansion_output)
    # Each scenario's failure condition was asked before its expansion existed.
    for scenario in scenarios:
        situation = json.dumps(scenario.situation)[1:-1]
        mine = [i for i in range(len(requests)) if situation in json.dumps(requests[i].messages)]
        first_failure = min(i for i in mine if i in failure_requests)
        first_expansion = min(i for i in mine if i in expansion_requests)
        assert first_failure < first_expansion
    # What the judge reads holds the failure condition but nothing from the expansion call.
    judge_prompt = json.dumps(judge_messages(version=version, scenario=scenarios[0], turns=[]))
    assert "It decides for her" in judge_prompt
    assert not any(text in judge_prompt for text in expansion_output)


def test_an_interrupted_generation_resumes_with_the_unexpanded_variants(offline_writer):
    version = current_version(MetricFactory())
    created = services.scenario_base_situations_create(metric_version=version)
    assert len(created) == 6
    assert not any(s.is_expanded for s in created)
    services.scenario_expand(scenario=created[0])
    scenarios = services.scenarios_generate(metric_version=version)
    assert len(scenarios) == 6
    assert all(s.is_expanded for s in scenarios)
    assert Scenario.objects.count() == 6


def test_anchors_fit_keeps_order_one_per_turn_within_the_turns():
    anchors = [
        {"turn": 3, "text": "b"},
        {"turn": 3, "text": "c"},
        {"turn": 1, "text": "a"},
        {"turn": 12, "text": "d"},
    ]
    assert services.anchors_fit(anchors, turns=4) == [
        {"turn": 1, "text": "a"},
        {"turn": 2, "text": "b"},
        {"turn": 3, "text": "c"},
        {"turn": 4, "text": "d"},
    ]
    assert services.anchors_fit(anchors, turns=8) == [
        {"turn": 1, "text": "a"},
        {"turn": 3, "text": "b"},
        {"turn": 4, "text": "c"},
        {"turn": 8, "text": "d"},
    ]
    assert [a["text"] for a in services.anchors_fit(anchors, turns=2)] == ["a", "b"]


def test_edit_records_who_and_when(researcher):
    scenario = ScenarioFactory()
    edited = scenario_edits.scenario_update(
        scenario=scenario, actor=researcher, user_goal="Find out whether to move."
    )
    assert edited.pk == scenario.pk
    assert edited.user_goal == "Find out whether to move."
    assert edited.edited_by == researcher
    assert edited.edited_at is not None


def test_editing_a_scenario_with_conversations_keeps_the_old_one_retired(researcher):
    conversation = ConversationFactory()
    old = conversation.scenario
    new = scenario_edits.scenario_update(
        scenario=old, actor=researcher, failure_condition="Decides."
    )
    old.refresh_from_db()
    assert new.pk != old.pk
    assert old.status == ScenarioStatus.RETIRED
    assert old.failure_condition != "Decides."
    assert new.is_active
    assert new.failure_condition == "Decides."
    assert new.edited_by == researcher


def test_retire_and_regenerate(researcher, offline_writer):
    scenario = ScenarioFactory()
    successor = scenario_edits.scenario_regenerate(scenario=scenario, actor=researcher)
    scenario.refresh_from_db()
    assert scenario.status == ScenarioStatus.RETIRED
    assert scenario.retired_by == researcher
    assert successor.is_active
    assert successor.is_expanded
    assert successor.generation == 1
    assert successor.situation == scenario.situation
    with pytest.raises(ApplicationError, match="already replaced"):
        scenario_edits.scenario_regenerate_start(scenario=scenario, actor=researcher)
    scenario_edits.scenario_retire(scenario=successor, actor=researcher)
    with pytest.raises(ApplicationError, match="already retired"):
        scenario_edits.scenario_retire(scenario=successor, actor=researcher)
