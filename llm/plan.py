"""A gateway call as steps: written once, driven by `llm.gateway` (sync) and `llm.aio` (async).

`chat_steps` and `structured_steps` are generators. Besides the HTTP steps of `llm.attempts`
(`Attempt`, `Wait`) they yield `CacheLookup` (answered with the stored reply or None) and
`CacheStore`; they return a ChatResult / StructuredResult or raise LLMError. Every provider,
the offline demo model among them, is reached the same way: through the `Attempt` steps.
Re-asks on invalid JSON, the larger token limit after a cut-off reply and the cache rules live
here, so both drivers apply them identically.
"""

import time
from collections.abc import Generator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.utils.translation import gettext as _
from pydantic import BaseModel

from .attempts import send_steps, with_format
from .cache import cache_enabled
from .exceptions import LLMError, StructuredOutputError
from .models import CallOutcome, ModelConfiguration
from .recording import CallRecorder, Sink
from .request import PreparedRequest, json_validator, prepare_request
from .transport_util import OutputRejected

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R", bound="ChatResult")


@dataclass(frozen=True)
class CacheLookup:
    key: str


@dataclass(frozen=True)
class CacheStore:
    key: str
    configuration: ModelConfiguration
    response_text: str
    parsed_json: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    cost: Decimal
    cached: bool
    is_offline: bool
    configuration_id: int
    fingerprint: str
    calls: list = field(default_factory=list)

    @property
    def call_ids(self) -> list[int]:
        return [call.pk for call in self.calls]

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class StructuredResult(ChatResult, Generic[T]):
    output: T | None = None


Steps = Generator[Any, Any, Any]


def _result(
    cls: type[R],
    *,
    recorder: CallRecorder,
    started: float,
    cached: bool,
    text: str,
    **extra: Any,
) -> R:
    return cls(
        text=text,
        prompt_tokens=recorder.prompt_tokens,
        completion_tokens=recorder.completion_tokens,
        latency_ms=int((time.monotonic() - started) * 1000),
        cost=recorder.cost,
        cached=cached,
        is_offline=recorder.configuration.is_offline,
        configuration_id=recorder.configuration.pk,
        fingerprint=recorder.fingerprint,
        calls=list(recorder.calls),
        **extra,
    )


def _begin(
    configuration: ModelConfiguration,
    messages: list[dict],
    role: str,
    purpose: str,
    seed: int | None,
    sink: Sink | None,
    params: dict,
    schema: type[BaseModel] | None = None,
) -> tuple[PreparedRequest, CallRecorder]:
    """The checked request of a call and the recorder its attempts are written through.

    Positional: both callers pass their own arguments of the same names straight on."""
    request = prepare_request(
        configuration=configuration,
        messages=messages,
        role=role,
        seed=seed,
        params=params,
        schema=schema,
    )
    recorder = CallRecorder(
        configuration=configuration,
        role=role,
        purpose=purpose,
        fingerprint=request.fingerprint,
        sink=sink,
    )
    return request, recorder


def chat_steps(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    may_hit: bool = True,
    sink: Sink | None = None,
    params: dict | None = None,
) -> Steps:
    """A free-text reply. `may_hit` false: the caller knows no stored reply can match."""
    started = time.monotonic()
    request, recorder = _begin(configuration, messages, role, purpose, seed, sink, params or {})
    caching = cache_enabled(configuration=configuration, use_cache=use_cache)
    hit = (yield CacheLookup(request.fingerprint)) if caching and may_hit else None
    if hit is not None:
        _record_cache_hit(recorder, request, text=hit.response_text, parsed=None, hit=hit)
        return _result(
            ChatResult, recorder=recorder, started=started, cached=True, text=hit.response_text
        )
    reply = yield from send_steps(
        configuration=configuration,
        messages=request.messages,
        parameters=request.parameters,
        recorder=recorder,
        role=role,
    )
    if caching:
        yield CacheStore(
            key=request.fingerprint,
            configuration=configuration,
            response_text=reply.text,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
    return _result(ChatResult, recorder=recorder, started=started, cached=False, text=reply.text)


def structured_steps(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    schema: type[T],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    may_hit: bool = True,
    sink: Sink | None = None,
    reasks: int | None = None,
    negotiate: bool = True,
    fail_fast: bool = False,
) -> Steps:
    """A reply validated against `schema`; re-asks with the validation error when it is not.

    Raises StructuredOutputError (carrying the last raw reply) once `reasks` (default
    settings.LLM_STRUCTURED_REASKS) re-asks are spent. `negotiate` and `fail_fast` are the
    retry policy's (`llm.attempts.send_steps`).
    """
    reask_limit = settings.LLM_STRUCTURED_REASKS if reasks is None else reasks
    started = time.monotonic()
    request, recorder = _begin(configuration, messages, role, purpose, seed, sink, {}, schema)
    validate = json_validator(schema)

    caching = cache_enabled(configuration=configuration, use_cache=use_cache)
    hit = (yield CacheLookup(request.fingerprint)) if caching and may_hit else None
    if hit is not None:
        try:
            output = validate(hit.response_text)
        except OutputRejected:
            hit = None  # The schema changed since; ask again.
        else:
            _record_cache_hit(
                recorder,
                request,
                text=hit.response_text,
                parsed=output.model_dump(mode="json"),
                hit=hit,
            )
            return _result(
                StructuredResult,
                recorder=recorder,
                started=started,
                cached=True,
                text=hit.response_text,
                output=output,
            )

    conversation = list(request.messages)
    parameters = request.parameters
    reasks = 0
    enlarged = False
    while True:
        # A refused format moved the configuration down a mode: the re-ask uses the new one.
        parameters = with_format(parameters, schema, configuration.structured_output)
        reply = yield from send_steps(
            configuration=configuration,
            messages=conversation,
            parameters=parameters,
            recorder=recorder,
            validate=validate,
            schema=schema,
            role=role,
            negotiate=negotiate,
            fail_fast=fail_fast,
        )
        if reply.accepted:
            if caching:
                yield CacheStore(
                    key=request.fingerprint,
                    configuration=configuration,
                    response_text=reply.text,
                    parsed_json=reply.output.model_dump(mode="json"),
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens,
                )
            return _result(
                StructuredResult,
                recorder=recorder,
                started=started,
                cached=False,
                text=reply.text,
                output=reply.output,
            )
        if reply.cut_off and not enlarged:
            # Showing a model its own truncated JSON teaches it nothing; the same question
            # with room to finish does. Once only, so a rambling model cannot run up a bill.
            enlarged = True
            parameters = {**parameters, "max_tokens": larger_token_limit(parameters)}
            continue
        if reasks >= reask_limit:
            break
        reasks += 1
        conversation = [
            *conversation,
            {"role": "assistant", "content": reply.text},
            {
                "role": "user",
                "content": (
                    f"That reply is not a valid {schema.__name__} object:\n{reply.rejection}\n"
                    "Reply again with only the corrected JSON object."
                ),
            },
        ]
    error = StructuredOutputError(
        _(
            "%(configuration_name)s did not return a valid %(schema)s "
            "after %(reask_limit)s re-asks. Last error: %(reply_rejection)s"
        )
        % {
            "configuration_name": configuration.name,
            "schema": schema.__name__,
            "reask_limit": reask_limit,
            "reply_rejection": reply.rejection[:300],
        },
        raw_text=reply.text,
        validation_error=reply.rejection,
        call_ids=recorder.call_ids,
    )
    error.calls = list(recorder.calls)
    raise error


def larger_token_limit(parameters: dict) -> int:
    """The limit for re-asking a reply that was cut off: twice the one that cut it."""
    current = parameters.get("max_tokens") or settings.LLM_CUTOFF_DEFAULT_MAX_TOKENS
    return int(current) * 2


def _record_cache_hit(
    recorder: CallRecorder, request: PreparedRequest, *, text: str, parsed: Any, hit: Any
) -> None:
    recorder.record(
        messages=request.messages,
        parameters=request.parameters,
        outcome=CallOutcome.CACHED,
        response_text=text,
        parsed_json=parsed,
        prompt_tokens=hit.prompt_tokens,
        completion_tokens=hit.completion_tokens,
    )


__all__ = ["LLMError", "StructuredOutputError"]
