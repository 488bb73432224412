"""Attempts of unknown outcome are settled with the provider's own records (llm/reconcile.py).

An attempt is sent through the official SDK to the local OpenAI fake, its worker "dies" with
the reply unread (the journal's sink records nothing on "done"), the journal is replayed (an
"outcome unknown" row with no tokens), and the reaper's step looks it up at the fake by its
metadata.
"""

import contextlib
import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from evaluations.engine import journal
from evaluations.services import reaper
from llm import attempts, transport
from llm.attribution import call_attribution
from llm.models import CallOutcome, CallReconciliation, LLMCall, ReconcileState
from llm.plan import CacheLookup, chat_steps
from llm.reconcile import calls_reconcile
from llm.selectors import run_call_costs, run_call_totals, run_unknown_outcomes
from llm.stored import STORE_KEY
from tests.llm.factories import ModelConfigurationFactory

pytestmark = [pytest.mark.django_db]

RUN_ID = 4401


class DiesBeforeRecording:
    """A journaling sink whose process dies once the reply has arrived, before recording it."""

    def __init__(self, journal_file):
        self.journal = journal_file

    def __call__(self, call, prompt):
        pass  # the reply was read off the wire, but the worker is gone before it is written

    def sending(self, call, prompt):
        self.journal.write("sent", call, prompt)


class NeverSends(DiesBeforeRecording):
    """Journals the attempt as sent and dies before the request reaches the provider."""

    def sending(self, call, prompt):
        super().sending(call, prompt)
        raise SystemExit  # the bytes never leave


def _killed_attempt(configuration, tmp_path, settings, *, text="Hello", reach=True) -> LLMCall:
    """One attempt whose worker died with its reply unread, restored from its journal."""
    settings.VAR_DIR = tmp_path
    file = journal.Journal()
    sink = DiesBeforeRecording(file) if reach else NeverSends(file)
    steps = chat_steps(
        configuration=configuration,
        messages=[{"role": "user", "content": text}],
        role="target",
        purpose="tests.reconcile",
        use_cache=False,
        sink=sink,
    )
    reply = None
    with call_attribution(run_id=RUN_ID, work_item="conversation:1"):
        try:
            while True:
                step = steps.send(reply)
                reply = None if isinstance(step, CacheLookup) else transport.run_step(step)
        except (StopIteration, SystemExit):
            pass
    file.close(written=False)
    assert journal.journals_replay() == 1
    return LLMCall.objects.get(outcome=CallOutcome.UNKNOWN)


def _later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


@pytest.fixture
def keeping(fake_openai):
    return ModelConfigurationFactory(
        base_url=fake_openai.base_url,
        store_completions=True,
        price_per_million_input_tokens=Decimal("3"),
        price_per_million_output_tokens=Decimal("15"),
    )


def test_an_answered_attempt_is_reconciled_with_the_providers_exact_bill(
    keeping, fake_openai, tmp_path, settings
):
    call = _killed_attempt(keeping, tmp_path, settings, text="How are you today?")
    sent = fake_openai.last_request.body
    assert sent["store"] is True
    assert sent["metadata"] == {STORE_KEY: f"{call.group_id}:{call.attempt}"}
    assert call.parameters["metadata"] == sent["metadata"]  # the row says what was sent
    assert call.prompt_tokens == call.completion_tokens == 0
    assert run_call_costs(run_id=RUN_ID)[0].unknown_outcome_calls == 1

    # Not before LLM_RECONCILE_AFTER_SECONDS: nothing asked yet.
    assert calls_reconcile().reconciled == 0
    assert fake_openai.stored.lists == 0
    report = calls_reconcile(now=_later(settings.LLM_RECONCILE_AFTER_SECONDS + 1))

    assert report.reconciled == 1
    [(_model, billed_in, billed_out, cached, _writes)] = fake_openai.bill
    call.refresh_from_db()
    assert (call.prompt_tokens, call.completion_tokens) == (billed_in, billed_out)
    assert call.cached_prompt_tokens == cached
    assert call.outcome == CallOutcome.UNKNOWN  # the reply itself was never read
    expected = (Decimal(billed_in) * 3 + Decimal(billed_out) * 15) / 1_000_000
    assert call.cost_estimate == expected
    assert call.reconciliation.state == ReconcileState.RECONCILED
    assert call.reconciliation.completion_id.startswith("chatcmpl-")
    # The run's running totals (kept by triggers) and its public cost include it, exactly.
    totals = run_call_totals(run_id=RUN_ID)
    assert totals.prompt_tokens == billed_in
    assert totals.completion_tokens == billed_out
    assert totals.cost == expected
    [costs] = run_call_costs(run_id=RUN_ID)
    assert (costs.unknown_outcome_calls, costs.reconciled_calls) == (0, 1)
    assert run_unknown_outcomes(run_id=RUN_ID).unsettled == 0
    # Settled: the next sweeps leave it alone.
    assert calls_reconcile(now=_later(10_000)) == type(report)()


def test_an_attempt_the_provider_never_received_becomes_not_billed(
    keeping, fake_openai, tmp_path, settings
):
    call = _killed_attempt(keeping, tmp_path, settings, reach=False)
    assert fake_openai.request_count == 0
    assert call.parameters["store"] is True

    soon = calls_reconcile(now=_later(settings.LLM_RECONCILE_AFTER_SECONDS + 1))
    assert (soon.retried, soon.not_billed) == (1, 0)  # maybe not listed yet: asked again
    assert CallReconciliation.objects.get(call=call).state == ReconcileState.PENDING

    late = calls_reconcile(now=_later(settings.LLM_RECONCILE_GIVE_UP_SECONDS + 1))
    assert late.not_billed == 1
    call.refresh_from_db()
    assert call.reconciliation.state == ReconcileState.NOT_BILLED
    assert call.cost_estimate == 0
    assert run_call_costs(run_id=RUN_ID)[0].unknown_outcome_calls == 0


def test_the_provider_down_is_asked_again_later_then_reconciled(
    keeping, fake_openai, tmp_path, settings
):
    call = _killed_attempt(keeping, tmp_path, settings)
    fake_openai.list_down = True
    first = _later(settings.LLM_RECONCILE_AFTER_SECONDS + 1)

    report = calls_reconcile(now=first)

    assert report.retried == 1
    assert report.reconciled == 0
    row = CallReconciliation.objects.get(call=call)
    assert row.state == ReconcileState.PENDING
    assert row.tries == 1
    assert "503" in row.error or "InternalServerError" in row.error
    # Asked again only after another interval; the reaper's sweep never raises meanwhile.
    assert calls_reconcile(now=first + timedelta(seconds=1)).retried == 0
    fake_openai.list_down = False
    again = first + timedelta(seconds=settings.LLM_RECONCILE_AFTER_SECONDS + 1)
    assert calls_reconcile(now=again).reconciled == 1
    call.refresh_from_db()
    assert call.reconciliation.state == ReconcileState.RECONCILED
    assert call.prompt_tokens == fake_openai.bill[0][1]


def test_an_unreachable_provider_never_crashes_the_reaper(keeping, tmp_path, settings):
    call = _killed_attempt(keeping, tmp_path, settings)
    keeping.base_url = "http://127.0.0.1:9/v1"  # nothing listens there
    keeping.save(update_fields=["base_url"])
    settings.LLM_RECONCILE_AFTER_SECONDS = 0

    report = reaper.runs_reap()

    assert report.reconciled == 0
    row = CallReconciliation.objects.get(call=call)
    assert row.state == ReconcileState.PENDING
    assert "Connection" in row.error


def _raw_body(configuration, server) -> bytes:
    """The body of one request of `configuration`, as `server` received it."""
    steps = chat_steps(
        configuration=configuration,
        messages=[{"role": "user", "content": "Same words"}],
        role="target",
        purpose="tests.reconcile",
        use_cache=False,
    )
    reply = None
    with contextlib.suppress(StopIteration):
        while True:
            step = steps.send(reply)
            reply = None if isinstance(step, CacheLookup) else transport.run_step(step)
    return server.last_request.raw


def test_with_the_option_off_the_request_is_unchanged_and_the_row_stays_unknown(
    fake_openai, tmp_path, settings, monkeypatch
):
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)
    assert configuration.store_completions is False  # off by default
    off = _raw_body(configuration, fake_openai)
    # Byte for byte the body sent before attempts could carry `store`: the same request with
    # the parameters passed through untouched.
    monkeypatch.setattr(attempts, "stored_parameters", lambda _c, parameters, _k: parameters)
    assert off == _raw_body(configuration, fake_openai)
    monkeypatch.undo()
    assert b"store" not in off
    assert b"metadata" not in off

    call = _killed_attempt(configuration, tmp_path, settings, text="Same words")
    assert "store" not in call.parameters

    settings.LLM_RECONCILE_AFTER_SECONDS = 0
    assert calls_reconcile(now=_later(settings.LLM_RECONCILE_GIVE_UP_SECONDS + 1)).not_billed == 0
    assert fake_openai.stored.lists == 0
    assert fake_openai.stored.kept == []
    call.refresh_from_db()
    assert not CallReconciliation.objects.filter(call=call).exists()
    assert run_call_costs(run_id=RUN_ID)[0].unknown_outcome_calls == 1


@pytest.mark.slow(reason="loads the anthropic SDK (seconds) when it is the first test to")
def test_anthropic_attempts_carry_no_store_even_with_the_option(fake_anthropic, tmp_path, settings):
    configuration = ModelConfigurationFactory(
        base_url=fake_anthropic.base_url,
        provider="anthropic",
        model_id="claude-test",
        api_key_env="ANTHROPIC_API_KEY",
        store_completions=True,
    )
    call = _killed_attempt(configuration, tmp_path, settings)
    assert "metadata" not in call.parameters
    assert "store" not in json.dumps(fake_anthropic.last_request.body)
    settings.LLM_RECONCILE_AFTER_SECONDS = 0
    assert calls_reconcile() == type(calls_reconcile())()


def test_the_fake_refuses_metadata_beyond_openais_limits(fake_openai):
    import openai

    client = openai.OpenAI(api_key="k", base_url=fake_openai.base_url, max_retries=0)
    with client:
        _fake_checks(client)


def _fake_checks(client) -> None:
    import openai

    messages = [{"role": "user", "content": "Hi"}]
    too_many = {f"k{i}": "v" for i in range(17)}
    for metadata in (too_many, {"k" * 65: "v"}, {"k": "v" * 513}):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="m", messages=messages, store=True, metadata=metadata
            )
        assert refused.value.body["type"] == "invalid_request_error"
    # Kept only with store: true; listed by metadata and model in OpenAI's list shape.
    client.chat.completions.create(model="m", messages=messages, metadata={"a": "1"})
    client.chat.completions.create(model="m", messages=messages, store=True, metadata={"a": "2"})
    page = client.chat.completions.list(metadata={"a": "2"}, model="m")
    assert len(page.data) == 1
    assert page.data[0].usage.prompt_tokens > 0
    assert client.chat.completions.list(metadata={"a": "1"}, model="m").data == []
    assert client.chat.completions.list(metadata={"a": "2"}, model="other").data == []
