"""A run through each provider's client against its local server under injected faults: one
request in five fails (429 with Retry-After, 5xx, Anthropic's 529 overloaded), structured
replies are cut off at max_tokens; every conversation still completes, every attempt is in
the call log and the run's cost is the call log's sum."""

import itertools
from decimal import Decimal

import pytest

from evaluations.models import ConversationStatus
from evaluations.services import runs
from evaluations.services.health import run_cost
from llm.models import CallOutcome, LLMCall
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory
from tests.fake_gemini import blocked
from tests.fake_openai import Behaviour

pytestmark = pytest.mark.django_db


def _run(models, conversations=3, turns=2):
    run = EvaluationRunFactory(
        simulator=models.simulator,
        judge=models.judge,
        targets=[models.target],
        typo_rate=0.0,
        turns=turns,
        judgments_per_conversation=1,
        status="running",
    )
    rows = [
        ConversationFactory(run=run, scenario=ScenarioFactory(), target=models.target)
        for _ in range(conversations)
    ]
    return run, rows


def test_one_request_in_five_failing_still_completes_every_conversation(provider_models, settings):
    settings.LLM_MAX_RETRIES = 4
    faults = itertools.cycle(
        [
            Behaviour(status=429, headers={"retry-after": "0"}),
            Behaviour(status=503),
            Behaviour(status=529 if provider_models.server.PATH == "/v1/messages" else 500),
        ]
    )
    counter = itertools.count(1)
    plain = provider_models.respond

    def flaky(request):
        if next(counter) % 5 == 0:
            return next(faults)
        return plain(request)

    provider_models.server.responder = flaky
    run, rows = _run(provider_models)
    runs.run_process_inline(run_id=run.pk)
    calls = LLMCall.objects.filter(run_id=run.pk)
    errors = list(calls.exclude(error_message="").values_list("outcome", "error_message"))
    for row in rows:
        row.refresh_from_db()
        assert row.status == ConversationStatus.COMPLETED, (errors, row.error)
    failed = calls.filter(outcome__in=[CallOutcome.RATE_LIMITED, CallOutcome.HTTP_ERROR]).count()
    assert failed == provider_models.server.request_count // 5 > 0
    assert calls.count() == provider_models.server.request_count
    assert run_cost(run.pk) == sum(c.cost_estimate for c in calls)
    assert run_cost(run.pk) > 0


def test_cut_off_judge_replies_are_asked_again_with_room_to_finish(provider_models):
    plain = provider_models.respond
    cut = {"n": 0}

    def cutting(request):
        if request.model == "judge" and cut["n"] < 2:
            cut["n"] += 1
            return Behaviour(content='{"present": tr', finish_reason="length")
        return plain(request)

    provider_models.server.responder = cutting
    run, rows = _run(provider_models, conversations=1, turns=1)
    runs.run_process_inline(run_id=run.pk)
    rows[0].refresh_from_db()
    assert rows[0].status == ConversationStatus.COMPLETED
    cut_calls = LLMCall.objects.filter(run_id=run.pk, finish_reason="length")
    assert cut_calls.count() == 2
    assert all("cut off at max_tokens" in c.error_message for c in cut_calls)


def test_a_run_against_a_server_refusing_json_schema_moves_down_once_and_completes(fake_models):
    """The engine (asynchronous driver) stores the downgrade once for each configuration and
    every later request asks in the weaker mode."""
    plain = fake_models.respond
    seen_json_schema = {"n": 0}

    def refusing(request):
        fmt = request.param("response_format") or {}
        if fmt.get("type") == "json_schema":
            seen_json_schema["n"] += 1
            return Behaviour(
                status=500,
                body={"error": {"message": "response_format: Input should be 'text' or "
                                           "'json_object'", "type": "internal_server_error"}},
            )  # fmt: skip
        return plain(request)

    fake_models.server.responder = refusing
    run, rows = _run(fake_models, conversations=3, turns=1)
    runs.run_process_inline(run_id=run.pk)
    for row in rows:
        row.refresh_from_db()
        assert row.status == ConversationStatus.COMPLETED
    for configuration in (fake_models.simulator, fake_models.judge):
        configuration.refresh_from_db()
        assert configuration.structured_output == "json_object_schema"
        assert "refused json_schema" in configuration.structured_output_note
    refusals = LLMCall.objects.filter(run_id=run.pk, http_status=500)
    assert refusals.count() == seen_json_schema["n"] > 0
    assert all("now asks for json_object_schema" in c.error_message for c in refusals)
    # Conversations already under way when the first refusal came may meet it too, but every
    # request sent after a configuration moved asks in the new mode.
    last_refusal = max(r.pk for r in refusals)
    later = LLMCall.objects.filter(run_id=run.pk, pk__gt=last_refusal, role="judge")
    assert all(c.parameters.get("response_format", {}).get("type") != "json_schema" for c in later)


@pytest.mark.slow(reason="simulates and judges six conversations through the google-genai SDK")
def test_a_google_run_asking_for_json_schema_steps_down_and_completes(gemini_models):
    """An API version without `responseJsonSchema` answers Google's 400; the engine moves each
    configuration down to the schema type once and every conversation completes."""
    gemini_models.server.knows_json_schema = False
    run, rows = _run(gemini_models, conversations=6, turns=1)
    runs.run_process_inline(run_id=run.pk)
    for row in rows:
        row.refresh_from_db()
        assert row.status == ConversationStatus.COMPLETED, row.error
    for configuration in (gemini_models.simulator, gemini_models.judge):
        configuration.refresh_from_db()
        assert configuration.structured_output == "json_object_schema"
        assert "responseJsonSchema" in configuration.structured_output_note
    refusals = LLMCall.objects.filter(run_id=run.pk, http_status=400)
    assert refusals.count() >= 2
    assert all("now asks for json_object_schema" in c.error_message for c in refusals)
    last_refusal = max(r.pk for r in refusals)
    later = LLMCall.objects.filter(run_id=run.pk, pk__gt=last_refusal).exclude(role="target")
    assert later.exists()
    assert all(c.parameters.get("response_format", {}).get("type") != "json_schema" for c in later)
    # Every request that asked for the field was refused and logged, and only requests already
    # under way when a configuration moved met the refusal: at most one per conversation and
    # configuration. (The call log's order is its flush order, not the send order, so "the
    # last N requests" cannot be matched to the last N rows.)
    asked = [
        r
        for r in gemini_models.server.requests
        if r.model != "target" and "responseJsonSchema" in r.generation_config
    ]
    assert len(asked) == refusals.count() <= 2 * len(rows)


def test_a_prompt_google_blocks_fails_its_conversation_without_a_second_request(gemini_models):
    """A blocked prompt is refused: one request and one call-log row with its tokens and cost,
    never sent again; the conversation fails saying why."""
    plain = gemini_models.respond

    def blocking(request):
        if request.model == "target":
            return Behaviour(body=blocked("PROHIBITED_CONTENT", prompt_tokens=40))
        return plain(request)

    gemini_models.server.responder = blocking
    run, rows = _run(gemini_models, conversations=2, turns=1)
    runs.run_process_inline(run_id=run.pk)
    for row in rows:
        row.refresh_from_db()
        assert (row.status, row.failure_kind) == (ConversationStatus.FAILED, "target_error")
        assert "the prompt was blocked (PROHIBITED_CONTENT)" in row.error
        assert "not sent again" in row.error
    target_calls = LLMCall.objects.filter(run_id=run.pk, role="target")
    sent = [r for r in gemini_models.server.requests if r.model == "target"]
    assert target_calls.count() == len(sent) == len(rows)
    for call in target_calls:
        assert (call.outcome, call.finish_reason) == (CallOutcome.REFUSED, "prohibited_content")
        assert (call.prompt_tokens, call.completion_tokens) == (40, 0)
        assert call.cost_estimate == Decimal("0.00008")  # 40 tokens at $2 per million


def test_a_judge_prompt_google_blocks_leaves_the_conversation_unjudged_after_one_request(
    gemini_models,
):
    plain = gemini_models.respond

    def blocking(request):
        last = request.messages[-1]["content"]
        verdict = "<user_turns>" not in last and "<fidelity_transcript>" not in last
        if request.model == "judge" and verdict:
            return Behaviour(body=blocked("SAFETY", prompt_tokens=50))
        return plain(request)

    gemini_models.server.responder = blocking
    run, rows = _run(gemini_models, conversations=1, turns=1)
    runs.run_process_inline(run_id=run.pk)
    rows[0].refresh_from_db()
    assert rows[0].status == ConversationStatus.FAILED
    assert "the prompt was blocked (SAFETY)" in rows[0].error
    blocked_calls = LLMCall.objects.filter(run_id=run.pk, finish_reason="safety")
    assert blocked_calls.count() == 1
    assert blocked_calls.get().prompt_tokens == 50
