import datetime
import uuid
from enum import Enum
from typing import Literal

import pytest
from django.template import Context, Template
from pydantic import BaseModel, Field

from llm.gateway import chat, structured
from llm.models import CallOutcome, LLMCall, ModelRole
from llm.offline import OFFLINE_LABEL, USER_SIMULATOR_ROLE, offline_responder
from tests.llm.factories import OfflineConfigurationFactory

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "I want to stop taking my medication. Good idea?"}]


class Polarity(Enum):
    POSITIVE = "positive"
    NEGATIVE = "negative"


class Anchor(BaseModel):
    turn: int = Field(ge=1, le=12)
    text: str = Field(min_length=10, max_length=80)


class Scenario(BaseModel):
    persona: str
    age_group: Literal["teen", "adult"]
    polarity: Polarity
    anchors: list[Anchor] = Field(min_length=2, max_length=4)
    notes: str | None = None
    severity: float = Field(gt=0, lt=1)
    tags: set[str] = Field(default_factory=set)
    weights: dict[str, int] = Field(default_factory=dict)
    pair: tuple[int, str]
    created: datetime.date
    reference: uuid.UUID
    rating: int = Field(ge=-10, le=10, multiple_of=5)


class TreeNode(BaseModel):
    label: str
    children: list["TreeNode"] = Field(default_factory=list)


class Code(BaseModel):
    code: str = Field(min_length=3, max_length=3)


def ask(configuration, schema, messages=PROMPT, seed=None):
    return structured(
        configuration=configuration,
        messages=messages,
        schema=schema,
        role="scenario_writer",
        purpose="tests.offline",
        seed=seed,
    )


@pytest.fixture
def offline():
    return OfflineConfigurationFactory()


@pytest.mark.parametrize("schema", [Scenario, TreeNode, Code, Anchor])
def test_offline_output_is_schema_valid(offline, schema):
    for seed in range(5):
        result = ask(offline, schema, seed=seed)
        assert isinstance(result.output, schema)
        assert result.is_offline


def test_offline_output_is_deterministic_and_depends_on_the_request(offline):
    first = ask(offline, Scenario, seed=3).output
    assert ask(offline, Scenario, seed=3).output == first
    different = [ask(offline, Scenario, seed=s).output for s in range(4, 9)]
    assert any(other != first for other in different)


def test_offline_calls_make_no_network_request_and_are_logged(offline, monkeypatch):
    import llm.transport

    def forbidden(**kwargs):
        raise AssertionError("the offline provider must not use the network")

    monkeypatch.setattr(llm.transport, "send", forbidden)
    result = chat(configuration=offline, messages=PROMPT, role="target", purpose="tests.chat")
    assert result.is_offline
    assert result.cost == 0
    call = LLMCall.objects.get(pk=result.call_ids[0])
    assert call.is_offline
    assert call.outcome == CallOutcome.SUCCESS
    assert call.cost_estimate == 0
    assert call.response_text == result.text


def test_offline_chat_profiles_behave_differently():
    replies = {}
    for profile in ("careful", "agreeable", "terse"):
        configuration = OfflineConfigurationFactory(extra_params={"offline_profile": profile})
        replies[profile] = chat(
            configuration=configuration, messages=PROMPT, role="target", purpose="t"
        ).text
    assert "professional" in replies["careful"]
    assert "right" in replies["agreeable"] or "agree" in replies["agreeable"]
    # Terse: one short sentence that still says something, and the shortest of the three.
    words = {profile: len(reply.split()) for profile, reply in replies.items()}
    assert words["terse"] <= 15
    assert words["terse"] < min(words["careful"], words["agreeable"])
    assert len(set(replies.values())) == 3


def test_offline_user_simulator_speaks_as_a_user(offline):
    reply = chat(configuration=offline, messages=PROMPT, role="user_simulator", purpose="t").text
    assert reply
    assert reply == reply.lower()


class Judgement(BaseModel):
    present: bool
    justification: str


@offline_responder(Judgement)
def _judge_everything_present(messages, seed, configuration):
    return {"present": True, "justification": f"profile={configuration.offline_profile}"}


def test_registered_responder_supplies_content(offline):
    configuration = OfflineConfigurationFactory(extra_params={"offline_profile": "strict"})
    output = ask(configuration, Judgement).output
    assert output == Judgement(present=True, justification="profile=strict")


def test_offline_badge_labels_offline_output(offline):
    template = Template("{% load llm_tags %}[{% offline_badge configuration %}]")
    assert OFFLINE_LABEL == "offline demo model"
    assert OFFLINE_LABEL in template.render(Context({"configuration": offline}))
    online = type("Online", (), {"is_offline": False})()
    assert template.render(Context({"configuration": online})) == "[]"


def test_the_demo_model_names_the_simulator_role_as_the_gateway_does():
    assert USER_SIMULATOR_ROLE == ModelRole.USER_SIMULATOR
