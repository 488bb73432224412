"""HTTP transport to OpenAI-compatible endpoints (synchronous client), with our own retries.

The `openai` client is created with `max_retries=0`: retries happen in `llm.attempts` so that
every attempt is recorded as its own LLMCall and the backoff is under the platform's settings.
Retryable: 429, 408, 5xx, timeouts, connection errors and malformed successes (a 200 without
`choices`, with null or empty content, or with a body that is not JSON: recorded with outcome
"malformed", never returned as an empty reply), with capped exponential backoff and full
jitter, honouring Retry-After (capped). Anything else fails at once with an LLMError naming the
endpoint, the model and the status. The batch engine drives the same steps with an async
client (`llm.aio`).
"""

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import openai
from django.conf import settings

from . import limits
from .attempts import Attempt, AttemptOutcome, Wait, send_steps
from .exceptions import LLMError
from .models import ModelConfiguration
from .recording import CallRecorder
from .transport_util import (  # noqa: F401 - the transport's public names
    NO_AUTH_API_KEY,
    OutputRejected,
    TransportReply,
    api_key_for,
    backoff_delay,
    malformed_reason,
    retry_after_seconds,
)

# Tests replace this to observe backoff delays without waiting.
sleep = time.sleep

_clients: dict[tuple[int, str, str], openai.OpenAI] = {}
_clients_lock = threading.Lock()


def client_for(*, base_url: str, api_key: str) -> openai.OpenAI:
    """One client (and connection pool) per process, endpoint and key; clients are thread-safe."""
    # The pid is part of the key so forked Celery workers never share a parent's sockets.
    cache_key = (os.getpid(), base_url, api_key)
    with _clients_lock:
        client = _clients.get(cache_key)
        if client is None:
            client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)
            _clients[cache_key] = client
        return client


def attempt_sync(step: Attempt) -> AttemptOutcome:
    """One HTTP attempt under a limit slot (held for this attempt only, not its backoff)."""
    try:
        lease = limits.acquire(step.configuration)
    except LLMError as exc:
        return AttemptOutcome(limit_error=exc)
    waited_ms = int(lease.waited_seconds * 1000) if lease else 0
    client = client_for(base_url=step.configuration.endpoint, api_key=step.api_key)
    started = time.monotonic()
    try:
        # Parameters travel as the request body unchanged, so endpoint-specific ones
        # (vLLM's top_k, llama.cpp's repeat_penalty) pass through the client.
        completion = client.chat.completions.create(
            model=step.configuration.model_id,
            messages=step.messages,
            extra_body=step.parameters,
            timeout=settings.LLM_TIMEOUT_SECONDS,
        )
    except (openai.OpenAIError, ValueError) as exc:
        return AttemptOutcome(
            error=exc, latency_ms=(time.monotonic() - started) * 1000, limit_wait_ms=waited_ms
        )
    finally:
        limits.release(lease)
    return AttemptOutcome(
        completion=completion,
        latency_ms=(time.monotonic() - started) * 1000,
        limit_wait_ms=waited_ms,
    )


def send(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None = None,
) -> TransportReply:
    """Send one chat completion request, retrying transient failures; record every attempt.

    `validate` turns the reply text into the caller's output or raises OutputRejected; a
    rejected reply is recorded with outcome invalid_output and returned, not retried here.
    """
    steps = send_steps(
        configuration=configuration,
        messages=messages,
        parameters=parameters,
        recorder=recorder,
        validate=validate,
    )
    reply: AttemptOutcome | None = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as done:
            return done.value
        if isinstance(step, Wait):
            sleep(step.seconds)
            reply = None
        else:
            reply = attempt_sync(step)
