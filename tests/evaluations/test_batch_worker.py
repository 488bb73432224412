"""Batch mode on real Celery workers and beat: a worker killed while the run's batch is pending
at the provider, another started, the batch ends; the run completes with exact accounting.
And a reaper that died between the provider's answer and storing the batch's id: the batch is
found again at the provider, never submitted twice."""

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluations.engine import process_conversations
from evaluations.models import Conversation, ConversationStatus, RunStatus
from evaluations.services import runs
from llm.batches_reaper import batches_submit
from llm.connect import provider_for
from llm.models import BatchRequest, BatchRequestStatus, BatchStatus, LLMBatch
from llm.providers import registry
from tests.evaluations.test_batch_mode import (
    BATCHED_PER_CONVERSATION,
    CONVERSATIONS,
    JUDGMENTS,
    _assert_accounted,
    _batch_run,
)
from tests.evaluations.test_run_worker import _taxonomy, run_status, wait_for  # noqa: F401

FAST = {
    "RUN_CLAIM_LEASE_SECONDS": "2",
    "RUN_REAPER_INTERVAL_SECONDS": "1",
    "RUN_REDISPATCH_AFTER_SECONDS": "4",
    "RUN_TASK_RETRY_BACKOFF_SECONDS": "0.5",
    "LLM_BATCH_POLL_SECONDS": "0.5",
}


@pytest.mark.worker
@pytest.mark.faults
@pytest.mark.slow(reason="a batch-mode run through real Celery workers, one of them killed")
def test_a_worker_killed_while_batches_are_pending_loses_nothing(
    batch_models, celery_worker_factory
):
    fake = batch_models
    fake.server.batches.hold = True
    run, ids = _batch_run(fake)
    doomed = celery_worker_factory(concurrency=1, beat=True, extra_env=FAST)
    runs.run_dispatch(run_id=run.pk)
    wait_for(
        lambda: (
            LLMBatch.objects.filter(status=BatchStatus.SUBMITTED).exists()
            and Conversation.objects.filter(run=run, status=ConversationStatus.WAITING).count()
            == CONVERSATIONS
        ),
        timeout=90,
        what="every conversation parked and its batch at the provider",
    )
    doomed.kill()
    survivor = celery_worker_factory(concurrency=1, beat=True, extra_env=FAST)
    fake.server.batches.end()
    try:
        wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=120, what="the run")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{survivor.log()[-3000:]}") from None

    for conversation in Conversation.objects.filter(run=run):
        assert conversation.status == ConversationStatus.COMPLETED
        assert conversation.judgments.count() == JUDGMENTS
    # Every batched request went in one batch, submitted once, and was answered once.
    assert fake.server.batches.submitted == LLMBatch.objects.count()
    assert len(fake.server.batches.bill) == CONVERSATIONS * BATCHED_PER_CONVERSATION
    assert set(BatchRequest.objects.values_list("status", flat=True)) == {
        BatchRequestStatus.SUCCEEDED
    }
    _assert_accounted(fake, run)


@pytest.mark.slow(reason="simulates a batch-mode run's conversations before the batch")
def test_a_batch_whose_id_was_never_stored_is_found_not_submitted_again(batch_models, sent):
    fake = batch_models
    fake.server.batches.hold = True
    run, ids = _batch_run(fake)
    process_conversations(ids, worker="test")
    # A reaper took the requests into a batch and reached the provider, then died before it
    # stored the batch's id.
    batch = LLMBatch.objects.create(
        configuration=fake.judge,
        status=BatchStatus.SUBMITTING,
        request_count=BatchRequest.objects.count(),
    )
    BatchRequest.objects.update(status=BatchRequestStatus.SUBMITTED, batch=batch)
    module = registry.batches_module(fake.judge.provider)
    lines = list(batch.requests.order_by("pk").values_list("custom_id", "body"))
    module.batch_submit(provider_for(fake.judge), lines, batch.marker)
    LLMBatch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(hours=1))

    batches_submit()

    batch.refresh_from_db()
    assert batch.status == BatchStatus.SUBMITTED
    assert batch.provider_batch_id == next(iter(fake.server.batches.batches))
    assert fake.server.batches.submitted == 1
