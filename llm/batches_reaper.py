"""The reaper's side of batch mode: send pending requests in batches, poll them, collect.

Every step is a conditional UPDATE, so reapers on several hosts never send a request twice. A
batch is recorded as "submitting" before the provider is called; one still "submitting" after
the call could have returned is looked up at the provider by its marker (`LLMBatch.marker`) and
only submitted again if the provider has no such batch. Each collected request gets its one
call-log row then: an answer with the provider's usage, priced at the configuration's batch
price; an errored or expired request with its error (nothing billed), and its work item sends
it again directly. The item that takes an answer later writes no row of its own
(`llm.batches.collected_sink`).
"""

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .attempts import reply_failure
from .batches import batch_reply
from .connect import provider_for
from .exceptions import LLMError
from .models import (
    BatchRequest,
    BatchRequestStatus,
    BatchStatus,
    CallOutcome,
    LLMBatch,
    LLMCall,
    ModelConfiguration,
    PromptText,
)
from .providers import registry
from .providers.base import BatchResult
from .recording import prompt_text

logger = logging.getLogger(__name__)


def batches_submit() -> int:
    """Send pending requests, per configuration, in batches within the provider's limits;
    recover batches left "submitting". Returns the number of batches submitted."""
    submitted = 0
    # A submission makes at most two calls, each within LLM_TIMEOUT_SECONDS: one "submitting"
    # for longer than three is no longer in anyone's hands.
    stale = timezone.now() - timedelta(seconds=settings.LLM_TIMEOUT_SECONDS * 3)
    for batch in LLMBatch.objects.filter(
        status=BatchStatus.SUBMITTING, created_at__lt=stale
    ).select_related("configuration"):
        submitted += _recover(batch)
    pending = BatchRequest.objects.filter(status=BatchRequestStatus.PENDING)
    for configuration_id in set(pending.values_list("configuration_id", flat=True)):
        while (taken := _batch_take(configuration_id)) is not None:
            submitted += _submit(taken)
    return submitted


def _batch_take(configuration_id: int) -> LLMBatch | None:
    """Gather pending requests of one configuration into a new batch (rows locked, skipped by
    other reapers), within the provider's request and size limits."""
    configuration = ModelConfiguration.objects.get(pk=configuration_id)
    module = registry.batches_module(configuration.provider)
    most = min(module.MAX_REQUESTS, settings.LLM_BATCH_MAX_REQUESTS)
    with transaction.atomic():
        rows = list(
            BatchRequest.objects.select_for_update(skip_locked=True)
            .filter(configuration_id=configuration_id, status=BatchRequestStatus.PENDING)
            .order_by("pk")
            .values_list("pk", "custom_id", "body")[:most]
        )
        taken: list[int] = []
        size = 0
        for pk, custom_id, body in rows:
            size += module.batch_line_size(custom_id, body)
            if taken and size > module.MAX_BYTES:
                break
            taken.append(pk)
        if not taken:
            return None
        batch = LLMBatch.objects.create(
            configuration=configuration, status=BatchStatus.SUBMITTING, request_count=len(taken)
        )
        BatchRequest.objects.filter(pk__in=taken).update(
            status=BatchRequestStatus.SUBMITTED, batch=batch
        )
    return batch


def _submit(batch: LLMBatch) -> int:
    configuration = batch.configuration
    lines = list(batch.requests.order_by("pk").values_list("custom_id", "body"))
    module = registry.batches_module(configuration.provider)
    try:
        provider = provider_for(configuration)
    except LLMError as error:
        # Its key is unset or may not go to the address: the requests go directly (and fail
        # there with the same message, on their item).
        _batch_fail(batch, error.message)
        return 0
    try:
        state = module.batch_submit(provider, lines, batch.marker)
    except Exception as error:
        failure = provider.classify(error)
        if failure.retryable:
            # Left "submitting": the next sweep after the grace looks it up, then resends.
            logger.warning("Could not submit %s: %s", batch, failure.message)
            return 0
        _batch_fail(batch, failure.message)
        return 0
    updated = LLMBatch.objects.filter(pk=batch.pk, status=BatchStatus.SUBMITTING).update(
        status=BatchStatus.SUBMITTED,
        provider_batch_id=state.id,
        provider_status=state.status,
        submitted_at=timezone.now(),
    )
    return updated


def _recover(batch: LLMBatch) -> int:
    """A batch left "submitting": adopt the provider's batch if it has it, else send it again."""
    # Only one reaper recovers it: the one whose conditional update stamps it.
    now = timezone.now()
    if not LLMBatch.objects.filter(
        pk=batch.pk, status=BatchStatus.SUBMITTING, polled_at=batch.polled_at
    ).update(polled_at=now):
        return 0
    module = registry.batches_module(batch.configuration.provider)
    try:
        provider = provider_for(batch.configuration)
        state = module.batch_find(
            provider, batch.marker, since=batch.created_at, count=batch.request_count
        )
    except Exception as error:  # noqa: BLE001 - looked up again at the next sweep
        logger.warning("Could not look up %s: %s", batch, error)
        return 0
    if state is None:
        return _submit(batch)
    return LLMBatch.objects.filter(pk=batch.pk, status=BatchStatus.SUBMITTING).update(
        status=BatchStatus.SUBMITTED,
        provider_batch_id=state.id,
        provider_status=state.status,
        submitted_at=now,
    )


def _batch_fail(batch: LLMBatch, message: str) -> None:
    """The provider refused the whole batch: its requests end errored (sent again directly)."""
    _results_write(batch, [], failed=message)


def batches_collect() -> int:
    """Poll submitted batches (each at most every LLM_BATCH_POLL_SECONDS); write the results
    of those that ended. Returns the number of batches collected."""
    now = timezone.now()
    due = now - timedelta(seconds=settings.LLM_BATCH_POLL_SECONDS)
    collected = 0
    for batch in (
        LLMBatch.objects.filter(status=BatchStatus.SUBMITTED)
        .filter(Q(polled_at__isnull=True) | Q(polled_at__lt=due))
        .select_related("configuration")
    ):
        if not LLMBatch.objects.filter(
            pk=batch.pk, status=BatchStatus.SUBMITTED, polled_at=batch.polled_at
        ).update(polled_at=now):
            continue  # another reaper polls it
        module = registry.batches_module(batch.configuration.provider)
        try:
            provider = provider_for(batch.configuration)
            state = module.batch_retrieve(provider, batch.provider_batch_id)
            LLMBatch.objects.filter(pk=batch.pk).update(provider_status=state.status)
            if not state.ended:
                continue
            results = [] if state.failed else module.batch_results(provider, state.id)
        except Exception as error:  # noqa: BLE001 - polled again at the next sweep
            logger.warning("Could not poll %s: %s", batch, error)
            continue
        collected += _results_write(batch, results, failed=state.failed)
    return collected


def _results_write(batch: LLMBatch, results: list[BatchResult], *, failed: str = "") -> int:
    """Each request's result on its row and its call-log row, the batch ended: once, by
    whoever locks it first."""
    by_id = {result.custom_id: result for result in results}
    now = timezone.now()
    with transaction.atomic():
        locked = (
            LLMBatch.objects.select_for_update()
            .filter(pk=batch.pk, status__in=[BatchStatus.SUBMITTING, BatchStatus.SUBMITTED])
            .first()
        )
        if locked is None:
            return 0
        requests = list(batch.requests.filter(status=BatchRequestStatus.SUBMITTED))
        for request in requests:
            result = by_id.get(request.custom_id)
            if result is None:
                status = BatchRequestStatus.ERRORED if failed else BatchRequestStatus.EXPIRED
                result = BatchResult(
                    request.custom_id, status, error=failed or "not answered before the batch ended"
                )
            request.status = result.status
            request.ended_at = now
            request.http_status = result.http_status
            request.error = result.error[:2000]
            reply = result.reply
            if reply is not None:
                request.response_text = reply.text
                request.finish_reason = reply.finish_reason
                request.problem = reply.problem
                request.refused = reply.refused
                request.prompt_tokens = reply.usage.prompt_tokens
                request.completion_tokens = reply.usage.completion_tokens
                request.cached_prompt_tokens = reply.usage.cached_prompt_tokens
                request.cache_write_tokens = reply.usage.cache_write_tokens
        BatchRequest.objects.bulk_update(
            requests,
            [
                "status",
                "ended_at",
                "http_status",
                "error",
                "response_text",
                "finish_reason",
                "problem",
                "refused",
                "prompt_tokens",
                "completion_tokens",
                "cached_prompt_tokens",
                "cache_write_tokens",
            ],  # fmt: skip
        )
        _calls_record(batch.configuration, requests)
        LLMBatch.objects.filter(pk=batch.pk).update(
            status=BatchStatus.FAILED if failed else BatchStatus.ENDED,
            error=failed[:2000],
            ended_at=now,
        )
    return 1


def _calls_record(configuration: ModelConfiguration, requests: list[BatchRequest]) -> None:
    """One call-log row per collected request, written with its result so that the run's cost
    holds what the provider billed even if its item never takes the answer (the run cancelled
    in between). An answer: its usage at the batch price; a malformed or refused one as the
    item's steps would record it. A request the batch did not answer: what the provider said,
    no cost (errored and expired requests are not billed)."""
    prompts: list[PromptText] = []
    calls: list[LLMCall] = []
    for request in requests:
        prompt = prompt_text(request.messages)
        prompts.append(prompt)
        call = LLMCall(
            configuration_id=request.configuration_id,
            role=request.role,
            purpose=request.purpose,
            group_id=uuid.uuid4(),
            fingerprint=request.fingerprint,
            prompt_id=prompt.sha256,
            parameters=request.parameters,
            http_status=request.http_status,
            batched=True,
            is_offline=configuration.is_offline,
            run_id=request.run_id,
            work_item=request.work_item,
            claim=request.claim,
        )
        if request.status == BatchRequestStatus.SUCCEEDED:
            _answer_fill(call, configuration, request)
        else:
            expired = request.status == BatchRequestStatus.EXPIRED
            call.outcome = CallOutcome.FAILED if expired else CallOutcome.HTTP_ERROR
            call.error_message = (
                f"Expired in the provider's batch: {request.error}"
                if expired
                else f"Errored in the provider's batch: {request.error}"
            )[:1000]
        calls.append(call)
    PromptText.objects.bulk_create(prompts, ignore_conflicts=True)
    LLMCall.objects.bulk_create(calls)


def _answer_fill(call: LLMCall, configuration: ModelConfiguration, request: BatchRequest) -> None:
    """The call-log fields of a collected answer, billed at the batch price."""
    reply = batch_reply(request)
    call.outcome = CallOutcome.SUCCESS
    call.response_text = reply.text
    call.finish_reason = reply.finish_reason
    if reply.problem:
        failure = reply_failure(reply, where=provider_for(configuration).where)
        call.outcome = failure.outcome
        call.error_message = failure.message[:1000]
    usage = reply.usage
    call.prompt_tokens = usage.prompt_tokens
    call.completion_tokens = usage.completion_tokens
    call.cached_prompt_tokens = usage.cached_prompt_tokens
    call.cache_write_tokens = usage.cache_write_tokens
    call.cost_estimate = configuration.cost_estimate(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        batched=True,
    )
