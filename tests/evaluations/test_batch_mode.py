"""Batch mode: judging and checks through the providers' batch APIs (OpenAI Batch API,
Anthropic Message Batches), against the protocol fakes, with the reaper driven here.

Each test measures the call log against what the fake received and billed: one row per
request, batched rows for the batch's lines, cost exactly the fake's bill at the batch price.
"""

from decimal import Decimal

import pytest
from django.db.models import Count, Sum
from django.urls import reverse

from evaluations.engine import process_conversations, process_rubric_responses
from evaluations.models import (
    Conversation,
    ConversationStatus,
    Judgment,
    RubricGrading,
    RubricResponse,
    RunStatus,
)
from evaluations.selectors import run_usage
from evaluations.services import reaper
from evaluations.services.estimates import run_estimate
from evaluations.services.processing import run_check_finished
from evaluations.services.runs import run_cancel
from llm.models import BatchRequest, BatchRequestStatus, BatchStatus, CallOutcome, LLMBatch, LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.factories import EvaluationRunFactory, ScenarioFactory
from tests.fake_openai import rubric_grader_reply
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.slow(reason="whole batch-mode runs: simulation, batches, judging")

CONVERSATIONS, TURNS, JUDGMENTS = 3, 2, 3
# Per conversation: the anchor check, the fidelity check and three judge readings.
BATCHED_PER_CONVERSATION = 1 + 1 + JUDGMENTS


def _batch_run(fake: FakeModels, scenario=None):
    run = EvaluationRunFactory(
        simulator=fake.simulator,
        judge=fake.judge,
        targets=[fake.target],
        typo_rate=0.0,
        turns=TURNS,
        judgments_per_conversation=JUDGMENTS,
        status=RunStatus.RUNNING,
        conversations_total=CONVERSATIONS,
        use_batch=True,
    )
    scenario = scenario or ScenarioFactory()
    Conversation.objects.bulk_create(
        Conversation(run=run, scenario=scenario, target=fake.target, replicate=n)
        for n in range(CONVERSATIONS)
    )
    return run, list(Conversation.objects.filter(run=run).values_list("pk", flat=True))


def bill_price(fake: FakeModels, bill, *, batched: bool) -> Decimal:
    """What a fake's bill costs at the models' prices, line by line (each line is one call):
    the batch price for the batch's bill, the full price for the requests sent directly."""
    models = {c.model_id: c for c in (fake.simulator, fake.target, fake.judge)}
    total = Decimal(0)
    for model, prompt, completion, cached, written in bill:
        prices = models[model]
        plain = prompt - cached - written
        full = (
            plain * prices.price_per_million_input_tokens
            + cached * (prices.price_per_million_cached_input_tokens or 0)
            + written * (prices.price_per_million_cache_write_tokens or 0)
            + completion * prices.price_per_million_output_tokens
        )
        ratio = prices.batch_price_ratio if batched else Decimal(1)
        total += (full * ratio / 1_000_000).quantize(Decimal("0.00000001"))
    return total


def _park_all(fake, ids):
    report = process_conversations(ids, worker="test")
    assert report.parked == len(ids)
    assert set(Conversation.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        ConversationStatus.WAITING
    }


def _answer_the_batch(fake) -> None:
    """The reaper submits the parked requests, the provider answers them, the reaper collects."""
    fake.server.batches.hold = True
    reaper.runs_reap()
    fake.server.batches.end()
    assert reaper.runs_reap().batches_collected == 1


def _finish(run, ids, process=process_conversations) -> None:
    """The engine takes the answers of the items sent back; the run completes."""
    process(ids, worker="test")
    run_check_finished(run_id=run.pk)
    assert run.__class__.objects.get(pk=run.pk).status == RunStatus.COMPLETED


def _assert_accounted(fake, run) -> None:
    server = fake.server
    batched = [r for r in server.requests if r.batch]
    direct = [r for r in server.requests if not r.batch]
    calls = LLMCall.objects.filter(run_id=run.pk)
    assert server.batches.problems == []
    # One row per request the fake received: the batch's lines batched, the rest direct.
    assert calls.filter(batched=True).count() == len(batched)
    assert calls.filter(batched=False).exclude(outcome=CallOutcome.CACHED).count() == len(direct)
    assert not calls.filter(batched=True).exclude(configuration=fake.judge).exists()
    cost = calls.aggregate(total=Sum("cost_estimate"))["total"]
    assert cost == bill_price(fake, server.batches.bill, batched=True) + bill_price(
        fake, server.bill, batched=False
    )
    assert bill_price(fake, server.batches.bill, batched=True) > 0
    # The run's own figures (the call log's running totals) say the same.
    assert run_usage(run_id=run.pk).cost == cost


def test_a_batch_mode_run_completes_with_exact_accounting(
    batch_models, sent, client_for, researcher
):
    fake = batch_models
    run, ids = _batch_run(fake)
    _park_all(fake, ids)
    requests = BatchRequest.objects.filter(run_id=run.pk)
    assert requests.count() == CONVERSATIONS * BATCHED_PER_CONVERSATION
    # Simulation went directly; nothing of the judge's has reached the provider yet.
    assert fake.requests_to("judge") == []

    fake.server.batches.hold = True
    assert reaper.runs_reap().batches_submitted == 1
    batch = LLMBatch.objects.get()
    assert batch.status == BatchStatus.SUBMITTED
    assert batch.provider_batch_id
    assert batch.request_count == CONVERSATIONS * BATCHED_PER_CONVERSATION
    assert reaper.runs_reap().batches_collected == 0  # still in progress at the provider
    assert sent == []
    # The live progress view says what goes by batch and what the provider says of it.
    page = client_for(researcher).get(
        reverse("evaluations:run-detail", args=[run.pk]), headers={"HX-Request": "true"}
    )
    html = page.content.decode()
    assert 'data-testid="run-batches"' in html
    assert "judge (verdicts, anchor checks, rubric grading), fidelity checker" in html
    status = "in_progress"
    assert (
        f"{fake.judge.name}: {batch.request_count} requests in a batch, provider status “{status}”"
        in html
    )

    fake.server.batches.end()
    report = reaper.runs_reap()
    assert (report.batches_collected, report.resumed) == (1, CONVERSATIONS)
    assert sorted(sent) == sorted(ids)
    process_conversations(sent, worker="test")
    run_check_finished(run_id=run.pk)

    assert run.__class__.objects.get(pk=run.pk).status == RunStatus.COMPLETED
    for conversation in Conversation.objects.filter(run=run):
        assert conversation.status == ConversationStatus.COMPLETED
        assert conversation.judgments.count() == JUDGMENTS
    assert set(requests.values_list("status", flat=True)) == {BatchRequestStatus.SUCCEEDED}
    # No judge request went directly, and the fake answered each batched request once.
    assert [r for r in fake.requests_to("judge") if not r.batch] == []
    assert len(fake.server.batches.bill) == CONVERSATIONS * BATCHED_PER_CONVERSATION
    _assert_accounted(fake, run)


def test_an_errored_line_is_recorded_with_its_error_and_sent_again_directly(batch_models, sent):
    fake = batch_models
    run, ids = _batch_run(fake)
    _park_all(fake, ids)
    fake.server.batches.hold = True
    reaper.runs_reap()
    fake.server.enqueue(status=500)  # the batch's first line fails at the provider
    fake.server.batches.end()
    reaper.runs_reap()
    process_conversations(sent, worker="test")
    run_check_finished(run_id=run.pk)

    assert run.__class__.objects.get(pk=run.pk).status == RunStatus.COMPLETED
    errored = LLMCall.objects.filter(run_id=run.pk, outcome=CallOutcome.HTTP_ERROR)
    assert errored.count() == 1
    row = errored.get()
    assert row.batched
    assert "Errored in the provider's batch" in row.error_message
    # Its request was asked again directly, once, and answered.
    again = [r for r in fake.requests_to("judge") if not r.batch]
    assert len(again) == 1
    assert LLMCall.objects.filter(
        run_id=run.pk, fingerprint=row.fingerprint, outcome=CallOutcome.SUCCESS, batched=False
    ).exists()
    _assert_accounted(fake, run)


def test_an_expired_batchs_requests_are_sent_again(batch_models, sent, settings):
    fake = batch_models
    run, ids = _batch_run(fake)
    _park_all(fake, ids)
    fake.server.batches.hold = True
    reaper.runs_reap()
    fake.server.batches.end(expire=True)
    reaper.runs_reap()
    process_conversations(sent, worker="test")
    run_check_finished(run_id=run.pk)

    assert run.__class__.objects.get(pk=run.pk).status == RunStatus.COMPLETED
    expired = LLMCall.objects.filter(run_id=run.pk, batched=True)
    assert expired.count() == CONVERSATIONS * BATCHED_PER_CONVERSATION
    assert set(expired.values_list("outcome", flat=True)) == {CallOutcome.FAILED}
    assert expired.aggregate(total=Sum("cost_estimate"))["total"] == 0
    assert len([r for r in fake.requests_to("judge") if not r.batch]) == expired.count()
    assert fake.server.batches.bill == []


def test_a_run_cancelled_before_its_items_take_the_answers_still_counts_the_bill(
    batch_models, sent
):
    """The call log is written when the batch is collected: the run's cost holds what the
    provider billed though no item took its answer, and taking it later adds no row."""
    fake = batch_models
    run, ids = _batch_run(fake)
    _park_all(fake, ids)
    _answer_the_batch(fake)
    run_cancel(run=run)

    billed = bill_price(fake, fake.server.batches.bill, batched=True)
    assert billed > 0
    batched = LLMCall.objects.filter(run_id=run.pk, batched=True)
    assert batched.count() == CONVERSATIONS * BATCHED_PER_CONVERSATION
    assert set(batched.values_list("outcome", flat=True)) == {CallOutcome.SUCCESS}
    assert batched.aggregate(total=Sum("cost_estimate"))["total"] == billed
    assert run_usage(run_id=run.pk).cost == billed  # the simulation was free

    # The items were sent back before the cancel; a delivery that still takes the answers
    # (its run resumed) does not write them again.
    run.__class__.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    process_conversations(sent, worker="test")
    assert batched.count() == CONVERSATIONS * BATCHED_PER_CONVERSATION
    assert run_usage(run_id=run.pk).cost == billed
    # What the items stored refers to the rows written at collection.
    judgments = Judgment.objects.filter(conversation__run=run)
    assert judgments.count() == CONVERSATIONS * JUDGMENTS
    referred = [pk for judgment in judgments for pk in judgment.call_ids]
    assert set(referred) == set(
        batched.filter(purpose="evaluations.judge_verdict").values_list("pk", flat=True)
    )


def test_a_rerun_whose_answers_are_cached_sends_no_batch(batch_models, sent):
    """A re-run with the same seed: the cache holds every judge answer, so nothing is parked,
    no batch is submitted and no row is batched."""
    fake = batch_models
    first, ids = _batch_run(fake)
    _park_all(fake, ids)
    _answer_the_batch(fake)
    _finish(first, sent)
    batches = LLMBatch.objects.count()

    again, again_ids = _batch_run(fake, scenario=Conversation.objects.get(pk=ids[0]).scenario)
    assert again.seed == first.seed
    report = process_conversations(again_ids, worker="test")
    assert (report.parked, report.completed) == (0, CONVERSATIONS)
    assert not BatchRequest.objects.filter(run_id=again.pk).exists()
    assert reaper.runs_reap().batches_submitted == 0
    assert LLMBatch.objects.count() == batches
    calls = LLMCall.objects.filter(run_id=again.pk)
    assert not calls.filter(batched=True).exists()
    assert calls.filter(role="judge", outcome=CallOutcome.CACHED).exists()


def test_the_estimate_prices_judging_by_batch_at_the_batch_price(batch_models):
    fake = batch_models
    run, _ids = _batch_run(fake)
    run.status = RunStatus.DRAFT
    batched = next(c for c in run_estimate(run).configurations if c.configuration == fake.judge)
    run.use_batch = False
    direct = next(c for c in run_estimate(run).configurations if c.configuration == fake.judge)
    assert (batched.prompt_tokens, batched.completion_tokens) == (
        direct.prompt_tokens,
        direct.completion_tokens,
    )
    assert direct.cost > 0
    assert batched.cost == fake.judge.cost_estimate(
        prompt_tokens=direct.prompt_tokens,
        completion_tokens=direct.completion_tokens,
        batched=True,
    )


def test_rubric_grading_goes_by_batch_all_criteria_of_a_reply_in_one_round(batch_models, sent):
    fake = batch_models
    fake.judge_reply = lambda request: rubric_grader_reply(
        request.messages[0]["content"], request.messages[-1]["content"]
    )
    items = RubricItemFactory.create_batch(2)
    run = EvaluationRunFactory(
        simulator=fake.simulator,
        judge=fake.judge,
        targets=[fake.target],
        status=RunStatus.RUNNING,
        rubric_grading=RubricGrading.PER_CRITERION,
        use_batch=True,
    )
    run.rubric_items.set(items)
    RubricResponse.objects.bulk_create(
        RubricResponse(run=run, item=item, target=fake.target) for item in items
    )
    ids = list(RubricResponse.objects.filter(run=run).values_list("pk", flat=True))
    assert process_rubric_responses(ids, worker="test").parked == 2
    criteria = BatchRequest.objects.filter(run_id=run.pk).count()
    assert criteria == sum(item.criteria.count() for item in items)
    _answer_the_batch(fake)
    _finish(run, sent, process=process_rubric_responses)
    graded = RubricResponse.objects.filter(run=run).annotate(n=Count("grades"))
    assert {(r.status, r.n) for r in graded} == {(ConversationStatus.COMPLETED, 3)}
    assert LLMBatch.objects.count() == 1  # every criterion of both replies in one round
    assert LLMCall.objects.filter(run_id=run.pk, batched=True).count() == criteria
    _assert_accounted(fake, run)
