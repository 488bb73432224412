"""Requests that may wait, sent through the providers' batch APIs at the batch price.

The engine asks here whether a configuration has a batch API (`batch_supported`), builds the
row of a request that is to go by batch (`batch_request_build`, the provider's body exactly as
a direct call would send it) and answers the first attempt of a gateway call from a collected
result (`answered_from_batch`): the call's own steps (`llm.plan`) then validate it, re-ask and
store it in the cache. Its call-log row, marked batched and priced at the configuration's
`batch_price_ratio`, was written when the reaper collected it (`llm.batches_reaper`), so a run
cancelled before its item takes the answer still counts what the provider billed; the item's
steps write through `collected_sink`, which leaves that row out. A re-ask or a retry after that
first attempt goes directly.
"""

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from .attempts import Attempt, AttemptOutcome
from .connect import provider_facts, provider_for
from .models import BatchRequest, BatchRequestStatus, LLMCall, ModelConfiguration, PromptText
from .providers import registry
from .providers.base import ChatRequest, ProviderReply, Usage
from .recording import Sink


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
    """The batch requests of the work items, by work item and request fingerprint, each with
    the id of its answer's call-log row (`logged_call_id`) once collected."""
    items = list(work_items)
    # One batched row per work item and request: the one written when it was collected.
    logged = dict(
        ((work_item, fingerprint), pk)
        for work_item, fingerprint, pk in LLMCall.objects.filter(
            work_item__in=items, batched=True
        ).values_list("work_item", "fingerprint", "pk")
    )
    found: dict[str, dict[str, BatchRequest]] = defaultdict(dict)
    for row in BatchRequest.objects.filter(work_item__in=items):
        row.logged_call_id = logged.get((row.work_item, row.fingerprint))
        found[row.work_item][row.fingerprint] = row
    return found


def batch_requests_open(*, work_items: Iterable[str]) -> set[str]:
    """The work items among these with a request not yet answered (pending or in a batch)."""
    return set(
        BatchRequest.objects.filter(
            work_item__in=list(work_items),
            status__in=[BatchRequestStatus.PENDING, BatchRequestStatus.SUBMITTED],
        ).values_list("work_item", flat=True)
    )


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


class collected_sink:  # noqa: N801 - used like the function-valued sinks it wraps
    """The sink of a call answered from a batch: the batched attempt's row is in the call log
    since its collection (`logged_call_id`), so it is not written again, however often the
    item takes it; the attempt takes that row's id, which what it stores refers to. Every
    later attempt, sent directly, goes through to `sink`."""

    def __init__(self, sink: Sink, logged_call_id: int | None) -> None:
        self.sink = sink
        self.logged_call_id = logged_call_id
        # A journaling sink is told of each attempt before it leaves; the batched one never
        # leaves, so only direct attempts reach it.
        sending = getattr(sink, "sending", None)
        if sending is not None:
            self.sending = sending

    def __call__(self, call: LLMCall, prompt: PromptText) -> None:
        # No row: collected before answers were logged at collection; logged now instead.
        if call.batched and self.logged_call_id is not None:
            call.pk = self.logged_call_id
            return
        self.sink(call, prompt)
