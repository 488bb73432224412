"""The synchronous driver of a request's attempts (`llm.attempts`): the web and Celery tasks.

Each attempt holds a limit slot (`llm.limits`) for the attempt only, not its backoff, and is
sent by the configuration's provider (`llm.providers`, built by `llm.connect`). Retries,
backoff and the record of every attempt are the retry policy's; a refused structured-output
format is stored on the configuration here (`Downgrade`).
"""

import time
from collections.abc import Callable
from typing import Any

from . import egress_http, limits
from .attempts import Attempt, AttemptOutcome, Downgrade, Wait, send_steps
from .exceptions import LLMError
from .models import ModelConfiguration
from .negotiation import structured_mode_downgrade
from .recording import CallRecorder
from .transport_util import (  # noqa: F401 - the transport's public names
    OutputRejected,
    TransportReply,
    api_key_for,
    backoff_delay,
    retry_after_seconds,
)

# Tests replace this to observe backoff delays without waiting.
sleep = time.sleep


def attempt_sync(step: Attempt) -> AttemptOutcome:
    """One attempt under a limit slot (held for this attempt only, not its backoff)."""
    provider = step.provider
    lease = None
    if not provider.is_offline:
        try:
            need = limits.tokens_needed(step.configuration, step.request)
            lease = limits.acquire(step.configuration, need)
        except LLMError as exc:
            return AttemptOutcome(limit_error=exc)
    waited_ms = int(lease.waited_seconds * 1000) if lease else 0
    try:
        started = time.monotonic()
        try:
            # Journaled as sent as its bytes leave (`llm.egress_http.on_sent`).
            with egress_http.on_sent(step.sending):
                reply = provider.send(step.request)
        except Exception as exc:  # noqa: BLE001 - the provider classifies what its client raised
            return AttemptOutcome(
                error=exc,
                latency_ms=(time.monotonic() - started) * 1000,
                limit_wait_ms=waited_ms,
            )
        limits.settle(lease, reply, configuration=step.configuration)
    finally:
        if lease is not None:
            limits.release(lease)
    return AttemptOutcome(
        reply=reply, latency_ms=(time.monotonic() - started) * 1000, limit_wait_ms=waited_ms
    )


def run_step(step: Any) -> Any:
    """Answer one step of `llm.attempts` here; None for a step that needs no answer."""
    if isinstance(step, Attempt):
        return attempt_sync(step)
    if isinstance(step, Wait):
        if step.pace is not None:
            limits.pace_refused(step.pace, step.seconds)
        sleep(step.seconds)
        return None
    if isinstance(step, Downgrade):
        structured_mode_downgrade(
            configuration=step.configuration,
            from_mode=step.from_mode,
            to_mode=step.to_mode,
            reason=step.reason,
        )
        return None
    raise TypeError(f"Unknown request step {step!r}")  # pragma: no cover - a programming error


def send(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None = None,
) -> TransportReply:
    """Send one chat request, retrying transient failures; record every attempt.

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
    reply: Any = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as done:
            return done.value
        reply = run_step(step)
