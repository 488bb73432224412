"""A worker SIGKILLed mid-run, with configurations that have the provider keep their
completions: once the reaper (real Celery beat) has looked the killed worker's attempts of
unknown outcome up at the local OpenAI server, the run's tokens and cost are exactly what the
server answered — replies the dead worker never read included (llm/reconcile.py)."""

from decimal import Decimal

import pytest
from django.db.models import Sum

from evaluations.models import RunStatus
from evaluations.selectors import run_usage
from llm.models import SETTLED_STATES, CallOutcome, LLMCall, ModelConfiguration
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_run_recovery import (
    FAST_RECOVERY,
    HTTP_OUTCOMES,
    launch_and_kill_mid_run,
)
from tests.evaluations.test_run_worker import (  # noqa: F401 - _taxonomy is an autouse fixture
    _taxonomy,
    run_status,
    wait_for,
)

pytestmark = [
    pytest.mark.worker,
    pytest.mark.faults,
    pytest.mark.slow(reason="kills a real Celery worker mid-run, then waits for the reaper"),
]

RECONCILE = {
    **FAST_RECOVERY,
    "LLM_RECONCILE_AFTER_SECONDS": "1",
    "LLM_RECONCILE_GIVE_UP_SECONDS": "5",
}


def _answered(server) -> tuple[int, Decimal]:
    """Tokens and cost of every completion the server produced (what a provider bills),
    priced by the configuration that names its model."""
    prices = {c.model_id: c for c in ModelConfiguration.objects.all()}
    tokens, cost = 0, Decimal(0)
    for _metadata, document in server.stored.kept:
        usage = document["usage"]
        tokens += usage["prompt_tokens"] + usage["completion_tokens"]
        cost += prices[document["model"]].cost_estimate(
            prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"]
        )
    return tokens, cost


def test_a_killed_workers_unread_replies_are_billed_as_the_provider_billed_them(
    celery_worker_factory, fake_openai
):
    fake = FakeModels(fake_openai)
    for configuration in (fake.simulator, fake.target, fake.judge):
        configuration.store_completions = True
        configuration.save(update_fields=["store_completions"])
    fake_openai.latency = 0.05
    celery_worker_factory(concurrency=1, beat=True, extra_env=RECONCILE)
    doomed = celery_worker_factory(concurrency=2, extra_env=RECONCILE)
    run = launch_and_kill_mid_run(fake, doomed)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=90, what="the run")
    logged = LLMCall.objects.filter(run_id=run.pk, outcome__in=HTTP_OUTCOMES)
    unknown = logged.filter(outcome=CallOutcome.UNKNOWN)
    wait_for(
        lambda: not unknown.exclude(reconciliation__state__in=SETTLED_STATES).exists(),
        timeout=60,
        what="the reaper to settle the attempts of unknown outcome",
    )

    # Every request was sent with store: true and its attempt's metadata, so the server kept
    # every completion it produced, and the call log now holds exactly those tokens and cost.
    assert all(request.body.get("store") is True for request in fake_openai.requests)
    tokens, cost = _answered(fake_openai)
    sums = logged.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    usage = run_usage(run_id=run.pk)
    print(
        f"{unknown.count()} unknown rows settled: "
        f"{unknown.filter(reconciliation__state='reconciled').count()} reconciled; "
        f"server answered {tokens} tokens (${cost}), logged {sums['p'] + sums['c']} (${usage.cost})"
    )
    assert sums["p"] + sums["c"] == tokens
    assert usage.cost == cost > 0
    # The running totals (triggers) took the reconciled rows' updates: equal to a fresh sum
    # over the whole call log (cache hits carry their tokens at no cost).
    every = LLMCall.objects.filter(run_id=run.pk).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens")
    )
    assert (usage.prompt_tokens, usage.completion_tokens) == (every["p"], every["c"])
