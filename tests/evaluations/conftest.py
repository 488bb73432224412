import itertools
from decimal import Decimal

import pytest

from evaluations.services import reaper
from evaluations.services.processing import WORK_ITEMS, WorkItems
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory
from tests.fake_openai import fidelity_reply, judge_reply
from tests.llm.factories import ModelConfigurationFactory


class FakeModels:
    """Simulator, target and judge on the local OpenAI-compatible server, told apart by model."""

    def __init__(self, server, provider: str = "openai_compatible"):
        self.server = server
        self.turn_counter = itertools.count(1)
        self.simulator_reply = lambda request, index: {"message": f"user message {index}"}
        # Scripted judge replies, in order; unset, the judge says present and quotes the
        # first assistant turn (`tests.fake_openai.judge_reply`).
        self.judge_replies = None
        # When set, the judge's reply is chosen by the request (for calls sent at once, whose
        # order at the server is not fixed) instead of taken from `judge_replies` in order.
        self.judge_reply = None
        self.target_reply = lambda request: (
            f"assistant reply {len(request.messages)}: weigh both options "
            "carefully before deciding."
        )
        # The anchor check (a judge-family call reading the user turns): none raised unless set.
        self.anchor_reply = lambda request: {
            "anchors": [{"anchor": 1, "raised": False, "turn": None, "quote": ""}]
        }
        # The fidelity check (the judge, unless the run names a checker): every criterion held.
        self.fidelity_reply = lambda request: fidelity_reply()
        server.responder = self.respond
        fields = {"base_url": server.base_url, "provider": provider}
        if provider in ("anthropic", "google"):
            # Set by the fake_anthropic and fake_gemini fixtures.
            fields["api_key_env"] = {"anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}[
                provider
            ]
        self.simulator = ModelConfigurationFactory(model_id="sim", **fields)
        self.target = ModelConfigurationFactory(
            model_id="target", system_prompt="You are Acme's helper.", **fields
        )
        self.judge = ModelConfigurationFactory(model_id="judge", **fields)

    def respond(self, request):
        if request.model == "sim":
            # Turn number: one kickoff message plus two per finished exchange.
            index = (len([m for m in request.messages if m["role"] != "system"]) + 1) // 2
            return {"stop": False, "stop_reason": "", **self.simulator_reply(request, index)}
        if request.model == "judge":
            if "<user_turns>" in request.messages[-1]["content"]:
                return self.anchor_reply(request)
            if "<fidelity_transcript>" in request.messages[-1]["content"]:
                return self.fidelity_reply(request)
            if self.judge_reply is not None:
                return self.judge_reply(request)
            if self.judge_replies is None:
                return judge_reply(request.messages[1]["content"])
            return next(self.judge_replies)
        return self.target_reply(request)

    def requests_to(self, model: str):
        return [r for r in self.server.requests if r.model == model]


@pytest.fixture
def fake_models(fake_openai, db):
    return FakeModels(fake_openai)


PROVIDER_SERVERS = {
    "openai_compatible": "fake_openai",
    "anthropic": "fake_anthropic",
    "google": "fake_gemini",
}


@pytest.fixture
def gemini_models(fake_gemini, db):
    """FakeModels on the local Gemini API, through the official google-genai SDK."""
    return FakeModels(fake_gemini, provider="google")


@pytest.fixture(params=list(PROVIDER_SERVERS))
def provider_models(request, db):
    """FakeModels on each provider's local server (tests/fake_openai.py, fake_anthropic.py,
    fake_gemini.py), through that provider's official client."""
    fixture = PROVIDER_SERVERS[request.param]
    return FakeModels(request.getfixturevalue(fixture), provider=request.param)


@pytest.fixture
def fake_conversation(fake_models):
    run = EvaluationRunFactory(
        simulator=fake_models.simulator,
        judge=fake_models.judge,
        targets=[fake_models.target],
        typo_rate=0.0,
    )
    return ConversationFactory(run=run, scenario=ScenarioFactory(), target=fake_models.target)


# Batch mode (tests/evaluations/test_batch_mode.py, test_batch_worker.py): the judge's prices.
PRICES = {
    "price_per_million_input_tokens": Decimal("3"),
    "price_per_million_output_tokens": Decimal("15"),
    "price_per_million_cached_input_tokens": Decimal("0.3"),
    "price_per_million_cache_write_tokens": Decimal("3.75"),
}


@pytest.fixture(params=["openai_compatible", "anthropic"])
def batch_models(request, db, settings):
    """FakeModels on each provider with a batch API, the judge priced (cache reads and writes
    too) and the simulator and target free, so a run's cost is its judging's."""
    settings.LLM_BATCH_POLL_SECONDS = 0
    server = request.getfixturevalue(
        {"openai_compatible": "fake_openai", "anthropic": "fake_anthropic"}[request.param]
    )
    fake = FakeModels(server, provider=request.param)
    for direct in (fake.simulator, fake.target):
        direct.price_per_million_input_tokens = Decimal(0)
        direct.price_per_million_output_tokens = Decimal(0)
        direct.save()
    for name, price in PRICES.items():
        setattr(fake.judge, name, price)
    fake.judge.save()
    return fake


@pytest.fixture
def sent(monkeypatch):
    """The ids the reaper sends back to the engine (no worker here: the test processes them)."""
    ids: list[int] = []
    kinds = [WorkItems(i.model, ids.extend, i.tasks, i.process) for i in WORK_ITEMS]
    monkeypatch.setattr(reaper, "WORK_ITEMS", tuple(kinds))
    return ids
