"""The retry policy of one request, written once for every provider and for both drivers.

`send_steps` is a generator: it yields `Attempt` (send this request, hold a limit slot for it,
and call its `sending` just as the request's bytes leave),
`Wait` (back off this long) and `Downgrade` (the server refused the structured-output format:
store the next weaker mode on the configuration), receives an `AttemptOutcome` for each
attempt and returns a `TransportReply` or raises LLMError. `llm.transport` drives it
synchronously, `llm.aio` on the batch engine's event loop. The provider of the configuration
(`llm.providers`, built on the configuration's plain values by `llm.connect`) sends the request
and classifies its own errors; what is retried, how each attempt is recorded and what the error
says are decided here, the same for every provider.
"""

import functools
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.utils.translation import gettext as _
from pydantic import BaseModel

from .connect import provider_facts, provider_for
from .egress import EgressRefused
from .exceptions import LLMError
from .models import STRUCTURED_MODE_ORDER, CallOutcome, ModelConfiguration
from .providers.base import (
    ChatProvider,
    ChatRequest,
    Failure,
    FailureKind,
    FailureOutcome,
    ProviderReply,
)
from .recording import CallRecorder
from .schema_prompt import response_format
from .stored import attempt_key, stored_parameters
from .transport_util import OutputRejected, TransportReply, backoff_delay


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Attempt:
    """Send `request` through `provider`, holding a slot of the configuration's limits.

    The driver has `sending` called just as the request is written to its connection
    (`llm.egress_http.on_sent`): an attempt still queued for a slot or a
    connection when its process dies was never sent, and must not be journaled as sent (it
    would be restored as an attempt of unknown outcome). One that never writes (an offline
    model, a connection refused) is never "sent"; its outcome is recorded as usual.
    """

    configuration: ModelConfiguration
    provider: ChatProvider
    request: ChatRequest
    sending: Callable[[], None] = _nothing


@dataclass(frozen=True)
class Wait:
    """Pause before the next attempt; says which attempt failed and why, for progress views."""

    seconds: float
    attempt: int = 0  # the attempt that failed, of `attempts`
    attempts: int = 0
    reason: str = ""
    # Set when the server refused for its rate limit (429): the whole configuration holds for
    # the wait (the server's Retry-After, else the backoff), in every worker, not only this
    # request (the others would meet the same refusal, each billed a request against the
    # limit), and the engine admits fewer requests at once (`llm.admission`).
    pace: ModelConfiguration | None = None


@dataclass(frozen=True)
class Downgrade:
    """Store `to_mode` as the configuration's structured mode (if it still has `from_mode`)."""

    configuration: ModelConfiguration
    from_mode: str
    to_mode: str
    reason: str


@dataclass
class AttemptOutcome:
    reply: ProviderReply | None = None
    error: BaseException | None = None  # what the provider's client raised
    limit_error: LLMError | None = None  # no slot under the limits in time
    latency_ms: float = 0.0
    limit_wait_ms: int = 0


Steps = Generator[Attempt | Wait | Downgrade, AttemptOutcome | None, TransportReply]


def _with_calls(error: LLMError, recorder: CallRecorder) -> LLMError:
    error.calls = list(recorder.calls)
    error.call_ids = recorder.call_ids
    return error


def egress_failure(error: BaseException | None, *, where: str) -> Failure | None:
    """The egress policy's refusal of a connection, found anywhere in the chain of causes
    (the SDKs wrap it as a connection error): permanent, the address will not change."""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, EgressRefused):
            return Failure(
                FailureKind.PERMANENT,
                FailureOutcome.FAILED,
                f"Did not connect to {where}: {error.message}",
                by_policy=True,
            )
        error = error.__cause__ or error.__context__
        seen += 1
    return None


def reply_failure(reply: ProviderReply, *, where: str) -> Failure:
    """A success in name only: a refusal the provider declared is not asked again; anything
    else is recorded and retried like a server error, never returned as an empty reply."""
    status = reply.http_status or 200
    if reply.refused:
        return Failure(
            FailureKind.REFUSED,
            FailureOutcome.REFUSED,
            f"{where} answered HTTP {status} but {reply.problem}: the provider declines this "
            "request, so it is not sent again.",
            status=reply.http_status,
            body=reply.raw,
            usage=reply.usage,
            finish_reason=reply.finish_reason,
        )
    return Failure(
        FailureKind.MALFORMED,
        FailureOutcome.MALFORMED,
        f"{where} answered HTTP {status} but {reply.problem}.",
        status=reply.http_status,
        body=reply.raw,
        usage=reply.usage,
    )


def weaker_mode(configuration: ModelConfiguration, mode: str) -> str | None:
    """The next mode down that the configuration's provider supports, or None."""
    supported = provider_facts(configuration).structured_modes
    later = STRUCTURED_MODE_ORDER[STRUCTURED_MODE_ORDER.index(mode) + 1 :]
    return next((m for m in later if m in supported), None)


def send_steps(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None = None,
    schema: type[BaseModel] | None = None,
    role: str = "",
    negotiate: bool = True,
    fail_fast: bool = False,
) -> Steps:
    """One request with retries of transient failures; every attempt is recorded.

    With `negotiate`, a structured request whose format the server refuses is sent again in
    the next weaker mode, which is stored on the configuration (`Downgrade`). With
    `fail_fast`, a refused connection is not retried (nothing listens at the address).
    """
    try:
        provider = provider_for(configuration)
    except LLMError as exc:
        recorder.record(
            messages=messages,
            parameters=parameters,
            outcome=CallOutcome.FAILED,
            error_message=exc.message,
        )
        raise _with_calls(exc, recorder) from None
    max_attempts = settings.LLM_MAX_RETRIES + 1
    where = provider.where
    attempt_index = 0
    while True:
        # What this attempt sends and records: the parameters, with `store` and the attempt's
        # metadata where the configuration has the provider keep its completions.
        key = attempt_key(recorder.group_id, recorder.attempts + 1)
        sent = stored_parameters(configuration, parameters, key)
        # The drivers answer an Attempt with its outcome (only Wait and Downgrade get None).
        outcome_of = cast(
            AttemptOutcome,
            (
                yield Attempt(
                    configuration,
                    provider,
                    ChatRequest(messages, sent, role, schema),
                    functools.partial(recorder.sending, messages=messages, parameters=sent),
                )
            ),
        )
        last = attempt_index + 1 >= max_attempts
        if outcome_of.limit_error is not None:
            recorder.record(
                messages=messages,
                parameters=sent,
                outcome=CallOutcome.RATE_LIMITED,
                error_message=outcome_of.limit_error.message,
            )
            raise _with_calls(outcome_of.limit_error, recorder)
        reply = outcome_of.reply
        if outcome_of.error is not None:
            failure = egress_failure(outcome_of.error, where=where) or provider.classify(
                outcome_of.error
            )
        elif reply is None:  # pragma: no cover - a programming error in a driver
            raise TypeError("an attempt's outcome holds a reply, an error or a limit error")
        elif reply.problem:
            failure = reply_failure(reply, where=where)
        else:
            return _accept(
                reply=reply,
                messages=messages,
                parameters=sent,
                recorder=recorder,
                validate=validate,
                latency_ms=outcome_of.latency_ms,
                limit_wait_ms=outcome_of.limit_wait_ms,
            )
        mode = configuration.structured_output
        weaker = (
            weaker_mode(configuration, mode)
            if negotiate and schema is not None and failure.format_refused
            else None
        )
        stop_now = fail_fast and failure.connection_refused
        retry = failure.retryable and not last and not stop_now
        delay = backoff_delay(attempt_index, failure.retry_after) if retry else 0.0
        error_message = failure.message
        if weaker is not None:
            error_message += (
                f" The server refused the {mode} response format: this configuration now asks "
                f"for {weaker}."
            )
        _record_failure(recorder, messages, sent, failure, outcome_of, error_message, delay)
        # (A weaker mode exists only for a structured request: the schema is there.)
        if weaker is not None and schema is not None:
            reason = f"The server refused {mode} ({failure.message[:300]}); moved to {weaker}."
            yield Downgrade(configuration, mode, weaker, reason)
            configuration.structured_output = weaker
            parameters = with_format(parameters, schema, weaker)
            attempt_index += 1
            continue
        if not failure.retryable or stop_now:
            error = LLMError(
                _("The model endpoint refused the request: %(reason)s")
                % {"reason": failure.message}
                if not (failure.retryable or failure.by_policy)
                else failure.message,
                status_code=failure.status,
            )
            error.failure = failure
            raise _with_calls(error, recorder)
        if last:
            error = LLMError(
                _(
                    "Gave up on %(where)s after %(max_attempts)s attempts; last "
                    "error: %(failure_message)s"
                )
                % {
                    "where": where,
                    "max_attempts": max_attempts,
                    "failure_message": failure.message,
                },
                status_code=failure.status,
                retryable=True,
            )
            error.failure = failure
            raise _with_calls(error, recorder)
        refused = configuration if failure.kind == FailureKind.RATE_LIMITED else None
        yield Wait(delay, attempt_index + 1, max_attempts, failure.message, refused)
        attempt_index += 1


def with_format(parameters: dict, schema: type[BaseModel], mode: str) -> dict:
    """`parameters` asking for `schema` in structured mode `mode`."""
    changed = {k: v for k, v in parameters.items() if k != "response_format"}
    fmt = response_format(schema, mode)
    if fmt is not None:
        changed["response_format"] = fmt
    return changed


def _record_failure(
    recorder: CallRecorder,
    messages: list[dict],
    parameters: dict,
    failure: Failure,
    outcome_of: AttemptOutcome,
    error_message: str,
    delay: float,
) -> None:
    recorder.record(
        messages=messages,
        parameters=parameters,
        outcome=failure.outcome,
        response_text=failure.body,
        error_message=error_message,
        http_status=failure.status,
        finish_reason=failure.finish_reason,
        usage=failure.usage,
        latency_ms=outcome_of.latency_ms,
        limit_wait_ms=outcome_of.limit_wait_ms,
        backoff_ms=delay * 1000,
        batched=outcome_of.reply is not None and outcome_of.reply.batched,
    )


def _accept(
    *,
    reply: ProviderReply,
    messages: list[dict],
    parameters: dict,
    recorder: CallRecorder,
    validate: Callable[[str], Any] | None,
    latency_ms: float,
    limit_wait_ms: int = 0,
) -> TransportReply:
    result = TransportReply(
        text=reply.text,
        prompt_tokens=reply.usage.prompt_tokens,
        completion_tokens=reply.usage.completion_tokens,
        finish_reason=reply.finish_reason,
    )
    parsed_json = None
    if validate is not None:
        try:
            result.output = validate(reply.text)
        except OutputRejected as exc:
            # Truncated JSON is not the model's mistake: say so instead of quoting a parser.
            result.rejection = (
                f"cut off at max_tokens ({parameters.get('max_tokens', 'endpoint default')})"
                if result.cut_off
                else str(exc)
            )
        except Exception as exc:
            # A reply paid for is logged before a failing validator can lose it.
            recorder.record(
                messages=messages,
                parameters=parameters,
                outcome=CallOutcome.INVALID_OUTPUT,
                response_text=reply.text,
                error_message=f"Checking the reply failed: {exc!r}"[:1000],
                http_status=reply.http_status,
                finish_reason=reply.finish_reason,
                usage=reply.usage,
                latency_ms=latency_ms,
                limit_wait_ms=limit_wait_ms,
            )
            raise
        else:
            dump = getattr(result.output, "model_dump", None)
            parsed_json = dump(mode="json") if dump else result.output
    recorder.record(
        messages=messages,
        parameters=parameters,
        outcome=CallOutcome.INVALID_OUTPUT if result.rejection else CallOutcome.SUCCESS,
        response_text=reply.text,
        parsed_json=parsed_json,
        error_message=result.rejection,
        http_status=reply.http_status,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
        latency_ms=latency_ms,
        limit_wait_ms=limit_wait_ms,
        batched=reply.batched,
    )
    return result


__all__ = ["Attempt", "AttemptOutcome", "Downgrade", "Wait", "send_steps"]
