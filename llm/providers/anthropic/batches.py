"""Anthropic's Message Batches through the official `anthropic` SDK: `messages.batches.create`
with one `{custom_id, params}` per request (the Messages body `client.messages_request`
builds), `retrieve` to poll and `results` (the batch's `results_url`, JSONL) once it has ended.

A Message Batch keeps no metadata, so a batch whose id was never stored is recognised by when
it was made and how many requests it holds (`batch_find`): only an unambiguous match counts.
"""

import json
from datetime import datetime
from typing import Any

from ..base import BatchResult, BatchState, ChatRequest
from .client import AnthropicProvider, messages_request, reply_of

# Anthropic's limits per batch: 100,000 requests or 256 MB.
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024


def batch_body(provider: AnthropicProvider, request: ChatRequest) -> dict:
    """The Messages body as `messages.create` sends it; parameters the SDK would pass as
    `extra_body` are fields of the body here."""
    body = messages_request(provider.model_name, request)
    return {**body.pop("extra_body", {}), **body}


def batch_line_size(custom_id: str, body: dict) -> int:
    return len(json.dumps({"custom_id": custom_id, "params": body}).encode("utf-8"))


def batch_submit(
    provider: AnthropicProvider, lines: list[tuple[str, dict]], marker: str
) -> BatchState:
    # The bodies are `messages_request`'s, checked by the API; the SDK's TypedDicts describe them.
    requests: list[Any] = [{"custom_id": custom_id, "params": body} for custom_id, body in lines]
    # Within the platform's timeout, so a submission cannot outlive the grace after which
    # another reaper looks its batch up (`llm.batches_reaper`).
    batch = provider._client().messages.batches.create(
        requests=requests, timeout=provider.config.timeout
    )
    return _state(batch)


def batch_find(
    provider: AnthropicProvider, marker: str, *, since: datetime, count: int
) -> BatchState | None:
    found = []
    for batch in provider._client().messages.batches.list(limit=100):
        if batch.created_at < since:
            break
        counts = batch.request_counts
        total = (
            counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
        )
        if total == count:
            found.append(batch)
    return _state(found[0]) if len(found) == 1 else None


def batch_retrieve(provider: AnthropicProvider, batch_id: str) -> BatchState:
    return _state(provider._client().messages.batches.retrieve(batch_id))


def batch_results(provider: AnthropicProvider, batch_id: str) -> list[BatchResult]:
    results = []
    for line in provider._client().messages.batches.results(batch_id):
        result: Any = line.result
        if result.type == "succeeded":
            reply = reply_of(result.message)
            reply.batched = True
            results.append(BatchResult(line.custom_id, "succeeded", reply=reply, http_status=200))
        elif result.type == "errored":
            error = getattr(result.error, "error", None)
            message = getattr(error, "message", "") or str(getattr(error, "type", "error"))
            results.append(BatchResult(line.custom_id, "errored", error=message))
        else:  # expired, or canceled before it ran
            results.append(
                BatchResult(line.custom_id, "expired", error=f"the request {result.type}")
            )
    return results


def _state(batch: Any) -> BatchState:
    status = batch.processing_status
    return BatchState(id=batch.id, status=status, ended=status == "ended")
