"""OpenAI's Batch API through the official `openai` SDK: a JSONL file of chat-completion
requests (`files.create(purpose="batch")`), a batch over it (`batches.create`, endpoint
`/v1/chat/completions`, a 24-hour window), and the output and error files read back
(`files.content`). A batch carries `metadata.impactbench` (the platform's marker), so one
whose id was never stored is found again (`batch_find`) instead of being submitted twice.
"""

import json
from datetime import datetime
from typing import Any, Literal

from openai.types.chat import ChatCompletion

from ..base import BatchResult, BatchState, ChatRequest
from .client import OpenAICompatibleProvider, reply_of

ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
WINDOW: Literal["24h"] = "24h"
# OpenAI's limits per batch: 50,000 requests and an input file of 200 MB.
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
_ENDED = ("completed", "failed", "expired", "cancelled")


def batch_body(provider: OpenAICompatibleProvider, request: ChatRequest) -> dict:
    """The chat-completion body exactly as `send_async` posts it."""
    return {"model": provider.model_name, **request.parameters, "messages": request.messages}


def batch_line_size(custom_id: str, body: dict) -> int:
    return len(_line(custom_id, body))


def _line(custom_id: str, body: dict) -> bytes:
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


def batch_submit(
    provider: OpenAICompatibleProvider, lines: list[tuple[str, dict]], marker: str
) -> BatchState:
    client = provider.client()
    payload = b"".join(_line(custom_id, body) for custom_id, body in lines)
    # Each call within the platform's timeout, so a submission cannot outlive the grace after
    # which another reaper looks its batch up (`llm.batches`).
    uploaded = client.files.create(
        file=(f"{marker}.jsonl", payload, "application/jsonl"),
        purpose="batch",
        timeout=provider.config.timeout,
    )
    batch = client.batches.create(
        input_file_id=uploaded.id,
        endpoint=ENDPOINT,
        completion_window=WINDOW,
        metadata={"impactbench": marker},
        timeout=provider.config.timeout,
    )
    return _state(batch)


def batch_find(
    provider: OpenAICompatibleProvider, marker: str, *, since: datetime, count: int
) -> BatchState | None:
    """The batch submitted under `marker`, if the provider has one (newest first)."""
    for batch in provider.client().batches.list(limit=100):
        if (batch.metadata or {}).get("impactbench") == marker:
            return _state(batch)
        if batch.created_at < since.timestamp() - 3600:
            break
    return None


def batch_retrieve(provider: OpenAICompatibleProvider, batch_id: str) -> BatchState:
    return _state(provider.client().batches.retrieve(batch_id))


def batch_results(provider: OpenAICompatibleProvider, batch_id: str) -> list[BatchResult]:
    """Every line of the output and error files; a request in neither never ran (expired)."""
    client = provider.client()
    batch = client.batches.retrieve(batch_id)
    results = []
    for file_id in (batch.output_file_id, batch.error_file_id):
        if not file_id:
            continue
        for raw in client.files.content(file_id).text.splitlines():
            if raw.strip():
                results.append(_result(json.loads(raw)))
    return results


def _result(line: dict) -> BatchResult:
    custom_id = str(line.get("custom_id") or "")
    error = line.get("error") or {}
    response = line.get("response") or {}
    status = response.get("status_code")
    if error.get("code") == "batch_expired":
        return BatchResult(custom_id, "expired", error=str(error.get("message") or "expired"))
    if error or status != 200:
        body: Any = response.get("body") or {}
        message = (body.get("error") or {}).get("message") if isinstance(body, dict) else ""
        return BatchResult(
            custom_id,
            "errored",
            error=str(error.get("message") or message or f"HTTP {status}"),
            http_status=status,
        )
    reply = reply_of(ChatCompletion.model_validate(response.get("body") or {}))
    reply.batched = True
    return BatchResult(custom_id, "succeeded", reply=reply, http_status=status)


def _state(batch: Any) -> BatchState:
    failed = ""
    if batch.status == "failed":
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        failed = "; ".join(str(e.message) for e in errors) or "the provider failed the batch"
    return BatchState(id=batch.id, status=batch.status, ended=batch.status in _ENDED, failed=failed)
