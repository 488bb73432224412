"""HTTP transport to OpenAI-compatible endpoints, with our own retry policy.

The `openai` client is created with `max_retries=0`: retries happen here so that every attempt
is recorded as its own LLMCall and the backoff is under the platform's settings. Retryable:
429, 408, 5xx, timeouts, connection errors and malformed successes (a 200 without `choices`,
with null or empty content, or with a body that is not JSON: recorded with outcome
"malformed", never returned as an empty reply), with capped exponential backoff and full
jitter, honouring Retry-After (capped). Anything else fails at once with an LLMError naming the
endpoint, the model and the status.
"""

import email.utils
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import openai
from django.conf import settings

from . import limits
from .exceptions import LLMError
from .keys import api_key_env_problem
from .models import CallOutcome, ModelConfiguration
from .recording import CallRecorder

# Local servers without authentication still need some key: the client refuses to start without.
NO_AUTH_API_KEY = "no-key-required"
ERROR_DETAIL_LIMIT = 500

# Tests replace this to observe backoff delays without waiting.
sleep = time.sleep

_clients: dict[tuple[int, str, str], openai.OpenAI] = {}
_clients_lock = threading.Lock()


class OutputRejected(Exception):
    """Raised by a `validate` callback: the reply arrived but is not usable as it is."""


@dataclass
class TransportReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    output: Any = None
    rejection: str = ""
    finish_reason: str = ""

    @property
    def cut_off(self) -> bool:
        """The endpoint stopped at the token limit, so the text is a truncated reply."""
        return self.finish_reason == "length"

    @property
    def accepted(self) -> bool:
        return not self.rejection


def api_key_for(configuration: ModelConfiguration) -> str:
    """The key, read from the environment at call time so rotating it needs no restart."""
    if not configuration.api_key_env:
        return NO_AUTH_API_KEY
    # Checked again at call time: rows saved before the rule, or written outside the forms.
    if problem := api_key_env_problem(configuration.api_key_env):
        raise LLMError(f"Configuration {configuration.name!r} cannot be used: {problem}")
    key = os.environ.get(configuration.api_key_env, "")
    if not key:
        raise LLMError(
            f"Set the environment variable {configuration.api_key_env} for configuration "
            f"{configuration.name!r}: it should hold the API key for {configuration.endpoint}."
        )
    return key


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


def backoff_delay(retry_index: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number `retry_index` (0-based)."""
    cap = settings.LLM_BACKOFF_MAX_SECONDS
    if retry_after is not None:
        return max(0.0, min(retry_after, cap))
    ceiling = min(cap, settings.LLM_BACKOFF_BASE_SECONDS * (2**retry_index))
    return random.uniform(0, ceiling)  # noqa: S311 - jitter spreads retries, not a secret


def retry_after_seconds(headers: Any) -> float | None:
    """Retry-After as seconds or an HTTP date; also the `retry-after-ms` some servers send."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return (when - datetime.now(tz=UTC)).total_seconds()


def _detail(exc: openai.APIStatusError) -> str:
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - the body is a courtesy for the error message
        text = ""
    return (text or str(exc))[:ERROR_DETAIL_LIMIT]


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
    try:
        api_key = api_key_for(configuration)
    except LLMError as exc:
        recorder.record(
            messages=messages,
            parameters=parameters,
            outcome=CallOutcome.FAILED,
            error_message=exc.message,
        )
        exc.call_ids = list(recorder.call_ids)
        raise
    client = client_for(base_url=configuration.endpoint, api_key=api_key)
    max_attempts = settings.LLM_MAX_RETRIES + 1
    where = f"{configuration.endpoint} (model {configuration.model_id!r})"

    for attempt_index in range(max_attempts):
        status: int | None = None
        retry_after: float | None = None
        body = ""
        # A slot under the configuration's shared limits for this attempt only: a retry
        # waiting out its backoff must not hold a slot another worker could use.
        try:
            lease = limits.acquire(configuration)
        except LLMError as exc:
            recorder.record(
                messages=messages,
                parameters=parameters,
                outcome=CallOutcome.RATE_LIMITED,
                error_message=exc.message,
            )
            exc.call_ids = list(recorder.call_ids)
            raise
        waited_ms = int(lease.waited_seconds * 1000) if lease else 0
        started = time.monotonic()
        try:
            # Parameters travel as the request body unchanged, so endpoint-specific ones
            # (vLLM's top_k, llama.cpp's repeat_penalty) pass through the client.
            completion = client.chat.completions.create(
                model=configuration.model_id,
                messages=messages,
                extra_body=parameters,
                timeout=settings.LLM_TIMEOUT_SECONDS,
            )
        except openai.APITimeoutError:
            outcome, retryable = CallOutcome.TIMEOUT, True
            error = f"No reply from {where} within {settings.LLM_TIMEOUT_SECONDS:g} s."
        except openai.APIConnectionError as exc:
            outcome, retryable = CallOutcome.CONNECTION_ERROR, True
            error = f"Could not connect to {where}: {exc.__cause__ or exc}"
        except openai.APIStatusError as exc:
            status = exc.status_code
            body = _detail(exc)
            retryable = status in (408, 429) or status >= 500
            outcome = CallOutcome.RATE_LIMITED if status == 429 else CallOutcome.HTTP_ERROR
            retry_after = retry_after_seconds(exc.response.headers)
            error = f"{where} answered HTTP {status}: {body}"
        except openai.OpenAIError as exc:
            outcome, retryable = CallOutcome.FAILED, False
            error = f"The call to {where} failed: {exc}"
        except ValueError as exc:
            # The client could not decode the body of a 200 (json.JSONDecodeError).
            outcome, retryable, status = CallOutcome.MALFORMED, True, 200
            error = f"{where} answered HTTP 200 with a body that is not JSON: {exc}"
        else:
            latency_ms = (time.monotonic() - started) * 1000
            limits.release(lease)
            problem = malformed_reason(completion)
            if problem:
                # A success in name only: recorded and retried like a server error, never
                # returned as an empty reply.
                outcome, retryable, status = CallOutcome.MALFORMED, True, 200
                body = _raw_text(completion)
                error = f"{where} answered HTTP 200 but {problem}."
                usage = getattr(completion, "usage", None)
                last = attempt_index + 1 == max_attempts
                delay = 0.0 if last else backoff_delay(attempt_index, None)
                recorder.record(
                    messages=messages,
                    parameters=parameters,
                    outcome=outcome,
                    response_text=body,
                    error_message=error,
                    http_status=status,
                    prompt_tokens=_usage_tokens(usage, "prompt_tokens"),
                    completion_tokens=_usage_tokens(usage, "completion_tokens"),
                    latency_ms=latency_ms,
                    limit_wait_ms=waited_ms,
                    backoff_ms=delay * 1000,
                )
                if last:
                    raise LLMError(
                        f"Gave up on {where} after {max_attempts} attempts; last error: {error}",
                        status_code=status,
                        retryable=True,
                        call_ids=list(recorder.call_ids),
                    )
                sleep(delay)
                continue
            return _accept(
                completion=completion,
                messages=messages,
                parameters=parameters,
                recorder=recorder,
                validate=validate,
                latency_ms=latency_ms,
                limit_wait_ms=waited_ms,
            )
        finally:
            # Also when the request raised something unexpected; the release in `else` (before
            # the reply is recorded, to free the slot sooner) makes this one a no-op.
            limits.release(lease)

        last = attempt_index + 1 == max_attempts
        delay = backoff_delay(attempt_index, retry_after) if retryable and not last else 0.0
        recorder.record(
            messages=messages,
            parameters=parameters,
            outcome=outcome,
            response_text=body,
            error_message=error,
            http_status=status,
            latency_ms=(time.monotonic() - started) * 1000,
            limit_wait_ms=waited_ms,
            backoff_ms=delay * 1000,
        )
        if not retryable:
            raise LLMError(
                f"The model endpoint refused the request: {error}",
                status_code=status,
                call_ids=list(recorder.call_ids),
            )
        if last:
            raise LLMError(
                f"Gave up on {where} after {max_attempts} attempts; last error: {error}",
                status_code=status,
                retryable=True,
                call_ids=list(recorder.call_ids),
            )
        sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def malformed_reason(completion: Any) -> str:
    """Why a 200 reply carries no usable text ("" when it does): what the error will say."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "without any choice in the reply (no `choices`)"
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if content is None:
        return "the message content is null"
    if not isinstance(content, str) or not content.strip():
        return "the message content is empty"
    return ""


def _usage_tokens(usage: Any, name: str) -> int:
    value = getattr(usage, name, 0) if usage is not None else 0
    return value if isinstance(value, int) and value > 0 else 0


def _raw_text(completion: Any) -> str:
    dump = getattr(completion, "model_dump_json", None)
    try:
        text = dump() if dump else str(completion)
    except Exception:  # noqa: BLE001 - the raw body is a courtesy for the call log
        text = repr(completion)
    return text[:ERROR_DETAIL_LIMIT]


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
            parsed_json = _jsonable(reply.output)
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


def _jsonable(output: Any) -> Any:
    dump = getattr(output, "model_dump", None)
    return dump(mode="json") if dump else output
