"""Requests that may wait, sent through the providers' batch APIs at the batch price.

The engine asks here whether a configuration has a batch API (`batch_supported`), builds the
row of a request that is to go by batch (`batch_request_build`, the provider's body exactly as
a direct call would send it) and answers the first attempt of a gateway call from a collected
result (`answered_from_batch`): the call's own steps (`llm.plan`) then validate it, re-ask,
store it in the cache and write its one call-log row, marked batched and priced at the
configuration's `batch_price_ratio`. A re-ask or a retry after that first attempt goes directly.

The reaper sends and collects (`batches_submit`, `batches_collect`): every step is a
conditional UPDATE, so reapers on several hosts never send a request twice. A batch is
recorded as "submitting" before the provider is called; one still "submitting" after the call
could have returned is looked up at the provider by its marker (`LLMBatch.marker`) and only
submitted again if the provider has no such batch. An errored or expired request gets one
call-log row with its error (nothing billed), and its work item sends it again directly.
"""

import hashlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel

from .attempts import Attempt, AttemptOutcome
from .connect import provider_facts, provider_for
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
from .providers.base import BatchResult, ChatRequest, ProviderReply, Usage
from .recording import prompt_text

logger = logging.getLogger(__name__)


def batch_supported(configuration: ModelConfiguration) -> bool:
    """Whether the configuration's provider has a batch API (read from its facts, no query)."""
    facts = provider_facts(configuration)
    return facts.has_batches and not facts.is_offline


def batch_custom_id(work_item: str, fingerprint: str) -> str:
    """One id per work item and request: the same question asked again finds its row."""
    digest = hashlib.sha256(f"{work_item}|{fingerprint}".encode()).hexdigest()
    return f"ib-{digest[:48]}"


def batch_request_build(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    schema: type[BaseModel] | None,
    role: str,
    purpose: str,
    fingerprint: str,
    run_id: int | None,
    work_item: str,
    claim: int | None,
) -> BatchRequest:
    """The (unsaved) row of a request to send by batch, with the provider's body."""
    provider = provider_for(configuration)
    module = registry.batches_module(configuration.provider)
    body = module.batch_body(provider, ChatRequest(messages, parameters, role, schema))
    return BatchRequest(
        configuration=configuration,
        custom_id=batch_custom_id(work_item, fingerprint),
        fingerprint=fingerprint,
        role=role,
        purpose=purpose,
        messages=messages,
        parameters=parameters,
        body=body,
        run_id=run_id,
        work_item=work_item,
        claim=claim,
    )


def batch_requests_add(requests: list[BatchRequest]) -> None:
    """Write the requests; one already recorded (same custom_id) is kept as it is."""
    BatchRequest.objects.bulk_create(requests, ignore_conflicts=True)


def batch_answers(*, work_items: Iterable[str]) -> dict[str, dict[str, BatchRequest]]:
    """The batch requests of the work items, by work item and request fingerprint.

    `taken` is set on a row whose answer is in the call log already (an item that took it,
    then parked again for a later ask): asked again, it is the cache's, not billed twice."""
    items = list(work_items)
    taken = set(
        LLMCall.objects.filter(work_item__in=items, batched=True)
        .exclude(outcome__in=[CallOutcome.HTTP_ERROR, CallOutcome.FAILED])
        .values_list("work_item", "fingerprint")
    )
    found: dict[str, dict[str, BatchRequest]] = defaultdict(dict)
    for row in BatchRequest.objects.filter(work_item__in=items):
        row.taken = (row.work_item, row.fingerprint) in taken
        found[row.work_item][row.fingerprint] = row
    return found


def batch_reply(row: BatchRequest) -> ProviderReply:
    """A collected result as the reply of a first attempt."""
    return ProviderReply(
        text=row.response_text,
        finish_reason=row.finish_reason,
        usage=Usage(
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
            cached_prompt_tokens=row.cached_prompt_tokens,
            cache_write_tokens=row.cache_write_tokens,
        ),
        http_status=row.http_status,
        problem=row.problem,
        refused=row.refused,
        batched=True,
    )


def answered_from_batch(steps: Any, reply: ProviderReply) -> Any:
    """A gateway call's steps whose first attempt is answered by `reply` (already received,
    so nothing is sent and no limit slot is held); every later step passes through."""
    answer: Any = None
    pending = True
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        if pending and isinstance(step, Attempt):
            pending = False
            answer = AttemptOutcome(reply=reply)
            continue
        answer = yield step


# --- the reaper's side ---------------------------------------------------------------------


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
    """Each request's result on its row, one call-log row per errored or expired request, the
    batch ended: once, by whoever locks it first."""
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
        failures: list[tuple[BatchRequest, str]] = []
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
            if request.status != BatchRequestStatus.SUCCEEDED:
                failures.append((request, result.error))
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
        _failures_record(failures)
        LLMBatch.objects.filter(pk=batch.pk).update(
            status=BatchStatus.FAILED if failed else BatchStatus.ENDED,
            error=failed[:2000],
            ended_at=now,
        )
    return 1


def _failures_record(failures: list[tuple[BatchRequest, str]]) -> None:
    """One call-log row per request the batch did not answer: what the provider said, no cost
    (errored and expired requests are not billed)."""
    prompts: list[PromptText] = []
    calls: list[LLMCall] = []
    for request, error in failures:
        prompt = prompt_text(request.messages)
        prompts.append(prompt)
        expired = request.status == BatchRequestStatus.EXPIRED
        calls.append(
            LLMCall(
                configuration_id=request.configuration_id,
                role=request.role,
                purpose=request.purpose,
                group_id=uuid.uuid4(),
                fingerprint=request.fingerprint,
                prompt_id=prompt.sha256,
                parameters=request.parameters,
                outcome=CallOutcome.FAILED if expired else CallOutcome.HTTP_ERROR,
                error_message=(
                    f"Expired in the provider's batch: {error}"
                    if expired
                    else f"Errored in the provider's batch: {error}"
                )[:1000],
                http_status=request.http_status,
                batched=True,
                run_id=request.run_id,
                work_item=request.work_item,
                claim=request.claim,
            )
        )
    PromptText.objects.bulk_create(prompts, ignore_conflicts=True)
    LLMCall.objects.bulk_create(calls)


def batch_requests_open(*, work_items: Iterable[str]) -> set[str]:
    """The work items among these with a request not yet answered (pending or in a batch)."""
    return set(
        BatchRequest.objects.filter(
            work_item__in=list(work_items),
            status__in=[BatchRequestStatus.PENDING, BatchRequestStatus.SUBMITTED],
        ).values_list("work_item", flat=True)
    )
