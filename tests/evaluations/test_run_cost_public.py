"""What an official run cost, on its public page (methodology) and in the public API: figures
computed once by the refresh from the call log of a run the engine produced through the real
OpenAI client against the local server, equal to the call log's sums; a configuration without
prices shows "price unknown", never $0, and makes the total a lower bound when others were
priced; the pages and API answers stay within their query ceilings."""

from decimal import Decimal

import pytest
from django.db.models import Sum
from django.urls import reverse

from evaluations.models import Conversation
from evaluations.services import runs
from evaluations.services.official import run_set_official
from evaluations.services.scenarios import scenarios_generate
from llm.models import LLMCall
from results.models import RunAnalysis
from results.services import results_refresh
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="simulates and judges a run through the engine, then refreshes it"),
]
RESAMPLES = 50
PAGE_QUERIES = 21
API_QUERIES = 12


def _official_run(models, *, unpriced=()):
    """A run of the fake models (one target) through the engine, refreshed and official."""
    for configuration in unpriced:
        configuration.price_per_million_input_tokens = Decimal(0)
        configuration.price_per_million_output_tokens = Decimal(0)
        configuration.save()
    helper = OfflineConfigurationFactory()
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version, configuration=helper)
    run = runs.run_create(
        name="Costed",
        metric_versions=[version],
        targets=[models.target],
        simulator=models.simulator,
        judge=models.judge,
        turns=1,
        judgments_per_conversation=1,
        seed=3,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    run.refresh_from_db()
    run.release = release_with("1.0.0", [version.metric], publish=True)
    run.save(update_fields=["release"])
    results_refresh(run=run, n_resamples=RESAMPLES)
    return run_set_official(run=run, official=True, changed_by=None)


def _sum(calls) -> Decimal:
    return calls.aggregate(s=Sum("cost_estimate"))["s"] or Decimal(0)


def _dollars(value: Decimal) -> str:
    return str(value.quantize(Decimal("1e-8")))


def test_an_official_runs_cost_is_the_call_logs_sum_on_its_page_and_in_the_api(
    fake_models, client, api_client, django_assert_max_num_queries
):
    run = _official_run(fake_models)
    calls = LLMCall.objects.filter(run_id=run.pk)
    conversations = Conversation.objects.filter(run=run)
    total = _sum(calls)
    assert total > 0
    with django_assert_max_num_queries(API_QUERIES):
        body = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()
    cost = body["cost"]
    assert cost["total"]["status"] == "known"
    assert Decimal(cost["total"]["cost"]) == total
    assert cost["total"]["calls"] == calls.count()
    n = conversations.count()
    assert cost["total"]["conversations"] == n > 0
    assert cost["total"]["per_conversation"] == _dollars(total / n)
    for row in cost["models"]:
        mine = calls.filter(configuration_id=row["configuration"], role=row["role"])
        assert (Decimal(row["cost"]), row["calls"]) == (_sum(mine), mine.count()), row
    assert {r["role"] for r in cost["models"]} >= {"target", "user_simulator", "judge"}
    (target,) = cost["targets"]
    assert target["target"] == fake_models.target.pk
    own = calls.filter(role="target", configuration=fake_models.target)
    items = [f"conversation:{pk}" for pk in conversations.values_list("pk", flat=True)]
    overhead = calls.filter(work_item__in=items).exclude(role="target")
    assert Decimal(target["own"]["cost"]) == _sum(own) > 0
    assert Decimal(target["overhead"]["cost"]) == _sum(overhead) > 0
    assert Decimal(target["cost"]) == _sum(own) + _sum(overhead)
    assert Decimal(cost["run_wide"]["cost"]) == _sum(calls.exclude(work_item__in=items))
    # The run list carries the same figures without a query per run.
    with django_assert_max_num_queries(API_QUERIES):
        listed = api_client.get(reverse("results-api:run-list")).json()["results"]
    assert listed[0]["cost"] == cost
    with django_assert_max_num_queries(PAGE_QUERIES):
        html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="run-cost"' in html
    assert f"${total:.4f}" in html
    assert "price unknown" not in html


def test_a_configuration_without_prices_is_price_unknown_never_zero(
    fake_models, client, api_client
):
    run = _official_run(
        fake_models, unpriced=(fake_models.target, fake_models.simulator, fake_models.judge)
    )
    assert _sum(LLMCall.objects.filter(run_id=run.pk)) == 0
    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert (cost["total"]["status"], cost["total"]["cost"]) == ("unknown", None)
    assert cost["total"]["per_conversation"] is None
    assert cost["total"]["unpriced_calls"] > 0
    assert all(row["cost"] is None for row in cost["models"])
    html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="cost-unknown-note"' in html
    assert "price unknown" in html
    assert "$0.0000" not in html


def test_some_calls_without_a_price_make_the_total_a_lower_bound(fake_models, client, api_client):
    run = _official_run(fake_models, unpriced=(fake_models.target,))
    calls = LLMCall.objects.filter(run_id=run.pk)
    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert cost["total"]["status"] == "lower_bound"
    assert Decimal(cost["total"]["cost"]) == _sum(calls) > 0
    billed = calls.filter(role="target").exclude(prompt_tokens=0, completion_tokens=0)
    assert cost["total"]["unpriced_calls"] == billed.count() > 0
    (target,) = cost["targets"]
    assert (target["own"]["status"], target["own"]["cost"]) == ("unknown", None)
    assert target["overhead"]["status"] == "known"
    assert target["status"] == "lower_bound"
    html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="cost-lower-bound-note"' in html
    assert "at least $" in html


def test_attempts_of_unknown_outcome_make_the_total_a_lower_bound(fake_models, client, api_client):
    """An attempt restored from a killed worker's journal (outcome unknown, no tokens) may have
    been billed: every price is known, yet the total is only "at least" and says why."""
    from llm.models import CallOutcome

    run = _official_run(fake_models)
    calls = LLMCall.objects.filter(run_id=run.pk)
    assert calls.exists()
    sent = calls.filter(role="judge").first()
    LLMCall.objects.filter(pk=sent.pk).update(
        outcome=CallOutcome.UNKNOWN, prompt_tokens=0, completion_tokens=0, cost_estimate=0
    )
    results_refresh(run=run, n_resamples=RESAMPLES)
    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert cost["total"]["status"] == "lower_bound"
    assert cost["total"]["unknown_outcome_calls"] == 1
    assert cost["total"]["unpriced_calls"] == 0
    assert Decimal(cost["total"]["cost"]) == _sum(calls) > 0
    (target,) = cost["targets"]
    assert target["own"]["status"] == "known"
    assert target["overhead"]["status"] == "lower_bound"
    html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="cost-unknown-outcome-note"' in html
    assert 'data-testid="cost-lower-bound-note"' not in html
    assert "at least $" in html


def test_the_cost_stays_through_a_refresh_of_rating_figures(fake_models):
    """A refresh of some figures (after ratings) merges them and keeps the stored cost."""
    from results.services.refresh_scope import figures_refresh

    run = _official_run(fake_models)
    before = RunAnalysis.objects.get(run=run).cost
    figures_refresh(run=run, names=["experts"], n_resamples=RESAMPLES)
    assert RunAnalysis.objects.get(run=run).cost == before != {}


def test_unknown_attempts_settled_by_the_providers_records_make_the_total_exact(
    fake_models, client, api_client, client_for, researcher
):
    """Once every attempt of unknown outcome is reconciled (or found not billed) with the
    provider's records (llm/reconcile.py), the total is exact again, on the public page, in
    the API and on the run page."""
    from llm.models import CallOutcome, CallReconciliation, ReconcileState

    run = _official_run(fake_models)
    calls = LLMCall.objects.filter(run_id=run.pk)
    billed, unanswered = calls.filter(role="judge")[:1].get(), calls.filter(role="target").first()
    LLMCall.objects.filter(pk=unanswered.pk).update(
        outcome=CallOutcome.UNKNOWN, prompt_tokens=0, completion_tokens=0, cost_estimate=0
    )
    LLMCall.objects.filter(pk=billed.pk).update(outcome=CallOutcome.UNKNOWN)
    researcher_page = client_for(researcher)
    live = reverse("evaluations:run-detail", args=[run.pk])
    html = researcher_page.get(live).content.decode()
    assert 'data-testid="run-unknown-outcomes"' in html
    assert 'data-testid="run-unknown-settled"' not in html

    CallReconciliation.objects.create(call=billed, state=ReconcileState.RECONCILED)
    CallReconciliation.objects.create(call=unanswered, state=ReconcileState.NOT_BILLED)
    results_refresh(run=run, n_resamples=RESAMPLES)

    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert cost["total"]["status"] == "known"
    assert cost["total"]["unknown_outcome_calls"] == 0
    assert cost["total"]["reconciled_calls"] == 2
    assert Decimal(cost["total"]["cost"]) == _sum(calls) > 0
    html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="cost-reconciled-note"' in html
    assert 'data-testid="cost-unknown-outcome-note"' not in html
    assert "at least $" not in html
    html = researcher_page.get(live).content.decode()
    assert 'data-testid="run-unknown-settled"' in html
    assert "1 reconciled" in html
    assert "1 never answered" in html


def test_unknown_attempts_that_could_not_be_reconciled_keep_the_total_a_lower_bound(
    fake_models, client, api_client, client_for, researcher
):
    """An attempt whose provider could not be asked for hours is settled as "lookup failed"
    (llm/reconcile.py): no longer looked up, but not "not billed": the total stays "at least",
    and the public page, the API and the run page say how many could not be reconciled."""
    from llm.models import CallOutcome, CallReconciliation, ReconcileState

    run = _official_run(fake_models)
    calls = LLMCall.objects.filter(run_id=run.pk)
    billed, unanswered = calls.filter(role="judge")[:1].get(), calls.filter(role="target").first()
    unasked = calls.exclude(pk__in=[billed.pk, unanswered.pk]).first()
    LLMCall.objects.filter(pk__in=[unanswered.pk, unasked.pk]).update(
        outcome=CallOutcome.UNKNOWN, prompt_tokens=0, completion_tokens=0, cost_estimate=0
    )
    LLMCall.objects.filter(pk=billed.pk).update(outcome=CallOutcome.UNKNOWN)
    CallReconciliation.objects.create(call=billed, state=ReconcileState.RECONCILED)
    CallReconciliation.objects.create(call=unanswered, state=ReconcileState.NOT_BILLED)
    CallReconciliation.objects.create(
        call=unasked,
        state=ReconcileState.LOOKUP_FAILED,
        failures=8,
        error="AuthenticationError: Error code: 401 - invalid api key",
    )
    results_refresh(run=run, n_resamples=RESAMPLES)

    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert cost["total"]["status"] == "lower_bound"
    assert cost["total"]["unknown_outcome_calls"] == 1
    assert cost["total"]["lookup_failed_calls"] == 1
    assert cost["total"]["reconciled_calls"] == 2
    html = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="cost-unknown-outcome-note"' in html
    assert 'data-testid="cost-lookup-failed-note"' in html
    assert "1 such attempt could not be reconciled" in html
    assert "at least $" in html
    html = client_for(researcher).get(reverse("evaluations:run-detail", args=[run.pk]))
    html = html.content.decode()
    assert 'data-testid="run-unknown-lookup-failed"' in html
    assert "1 could not be reconciled" in html
    assert "0 still unknown" in html
    assert 'data-testid="run-unknown-settled"' not in html
