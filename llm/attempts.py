"""The retry policy of one request, written once for the synchronous and the asynchronous client.

`send_steps` is a generator: it yields `Attempt` (send this request, hold a limit slot for it)
and `Wait` (back off this long) and receives an `AttemptOutcome` for each attempt; it returns a
`TransportReply` or raises LLMError. `llm.transport.send` drives it with `openai.OpenAI`,
the batch engine (`llm.aio`) with one shared `openai.AsyncOpenAI`. What is retried, how the
attempt is recorded and what the error says are decided here, the same for both.
"""

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import openai
from django.conf import settings

from .exceptions import LLMError
from .models import CallOutcome, ModelConfiguration
from .recording import CallRecorder
from .transport_util import (
    OutputRejected,
    TransportReply,
    api_key_for,
    backoff_delay,
    error_detail,
    malformed_reason,
    raw_text,
    retry_after_seconds,
    usage_tokens,
)


@dataclass(frozen=True)
class Attempt:
    """Send one chat completion request (after taking a slot under the configuration's limits)."""

    configuration: ModelConfiguration
    api_key: str
    messages: list[dict]
    parameters: dict


@dataclass(frozen=True)
class Wait:
    seconds: float


@dataclass
class AttemptOutcome:
    completion: Any = None
    error: BaseException | None = None  # what the client raised
    limit_error: LLMError | None = None  # no slot under the limits in time
    latency_ms: float = 0.0
    limit_wait_ms: int = 0


Steps = Generator[Attempt | Wait, AttemptOutcome | None, TransportReply]


def _with_calls(error: LLMError, recorder: CallRecorder) -> LLMError:
    error.calls = list(recorder.calls)
    error.call_ids = recorder.call_ids
    return error


def send_steps(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None = None,
) -> Steps:
    """One request with retries of transient failures; every attempt is recorded."""
    try:
        api_key = api_key_for(configuration)
    except LLMError as exc:
        recorder.record(
            messages=messages,
            parameters=parameters,
            outcome=CallOutcome.FAILED,
            error_message=exc.message,
        )
        raise _with_calls(exc, recorder) from None
    max_attempts = settings.LLM_MAX_RETRIES + 1
    where = f"{configuration.endpoint} (model {configuration.model_id!r})"
    for attempt_index in range(max_attempts):
        recorder.sending(messages=messages, parameters=parameters)
        outcome_of: AttemptOutcome = yield Attempt(configuration, api_key, messages, parameters)
        last = attempt_index + 1 == max_attempts
        status: int | None = None
        retry_after: float | None = None
        body = ""
        usage = None
        exc = outcome_of.error
        if outcome_of.limit_error is not None:
            recorder.record(
                messages=messages,
                parameters=parameters,
                outcome=CallOutcome.RATE_LIMITED,
                error_message=outcome_of.limit_error.message,
            )
            raise _with_calls(outcome_of.limit_error, recorder)
        if exc is None:
            problem = malformed_reason(outcome_of.completion)
            if not problem:
                return _accept(
                    completion=outcome_of.completion,
                    messages=messages,
                    parameters=parameters,
                    recorder=recorder,
                    validate=validate,
                    latency_ms=outcome_of.latency_ms,
                    limit_wait_ms=outcome_of.limit_wait_ms,
                )
            # A success in name only: recorded and retried like a server error, never
            # returned as an empty reply.
            outcome, retryable, status = CallOutcome.MALFORMED, True, 200
            body = raw_text(outcome_of.completion)
            usage = getattr(outcome_of.completion, "usage", None)
            error = f"{where} answered HTTP 200 but {problem}."
        elif isinstance(exc, openai.APITimeoutError):
            outcome, retryable = CallOutcome.TIMEOUT, True
            error = f"No reply from {where} within {settings.LLM_TIMEOUT_SECONDS:g} s."
        elif isinstance(exc, openai.APIConnectionError):
            outcome, retryable = CallOutcome.CONNECTION_ERROR, True
            error = f"Could not connect to {where}: {exc.__cause__ or exc}"
        elif isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            body = error_detail(exc)
            retryable = status in (408, 429) or status >= 500
            outcome = CallOutcome.RATE_LIMITED if status == 429 else CallOutcome.HTTP_ERROR
            retry_after = retry_after_seconds(exc.response.headers)
            error = f"{where} answered HTTP {status}: {body}"
        elif isinstance(exc, openai.OpenAIError):
            outcome, retryable = CallOutcome.FAILED, False
            error = f"The call to {where} failed: {exc}"
        elif isinstance(exc, ValueError):
            # The client could not decode the body of a 200 (json.JSONDecodeError).
            outcome, retryable, status = CallOutcome.MALFORMED, True, 200
            error = f"{where} answered HTTP 200 with a body that is not JSON: {exc}"
        else:
            raise exc
        delay = backoff_delay(attempt_index, retry_after) if retryable and not last else 0.0
        recorder.record(
            messages=messages,
            parameters=parameters,
            outcome=outcome,
            response_text=body,
            error_message=error,
            http_status=status,
            prompt_tokens=usage_tokens(usage, "prompt_tokens"),
            completion_tokens=usage_tokens(usage, "completion_tokens"),
            latency_ms=outcome_of.latency_ms,
            limit_wait_ms=outcome_of.limit_wait_ms,
            backoff_ms=delay * 1000,
        )
        if not retryable:
            raise _with_calls(
                LLMError(f"The model endpoint refused the request: {error}", status_code=status),
                recorder,
            )
        if last:
            raise _with_calls(
                LLMError(
                    f"Gave up on {where} after {max_attempts} attempts; last error: {error}",
                    status_code=status,
                    retryable=True,
                ),
                recorder,
            )
        yield Wait(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _accept(
    *,
    completion: Any,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None,
    latency_ms: float,
    limit_wait_ms: int = 0,
) -> TransportReply:
    choice = completion.choices[0] if completion.choices else None
    text = (choice.message.content if choice and choice.message else None) or ""
    usage = completion.usage
    reply = TransportReply(
        text=text,
        prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
        completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        finish_reason=str(getattr(choice, "finish_reason", None) or ""),
    )
    parsed_json = None
    if validate is not None:
        try:
            reply.output = validate(text)
        except OutputRejected as exc:
            # Truncated JSON is not the model's mistake: say so instead of quoting a parser.
            reply.rejection = (
                f"cut off at max_tokens ({parameters.get('max_tokens', 'endpoint default')})"
                if reply.cut_off
                else str(exc)
            )
        else:
            dump = getattr(reply.output, "model_dump", None)
            parsed_json = dump(mode="json") if dump else reply.output
    recorder.record(
        messages=messages,
        parameters=parameters,
        outcome=CallOutcome.INVALID_OUTPUT if reply.rejection else CallOutcome.SUCCESS,
        response_text=text,
        parsed_json=parsed_json,
        error_message=reply.rejection,
        http_status=200,
        finish_reason=reply.finish_reason,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_ms=latency_ms,
        limit_wait_ms=limit_wait_ms,
    )
    return reply


def elapsed_ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
