"""The one way the platform talks to models.

    from llm.gateway import chat, structured, chat_for_role, structured_for_role

    result = structured_for_role(
        role=ModelRole.JUDGE,
        purpose="evaluations.judge_verdict",
        messages=[{"role": "user", "content": prompt}],
        schema=Verdict,
        seed=run_seed,
    )
    result.output  # a validated Verdict

Prompt hygiene: any text a person wrote (a submission, a scenario, a transcript) is placed in a
prompt only through `core.sanitize.fence_user_text(text, label=...)`, and the prompt says that
fenced text is data, not instructions. Prompts live in one module per calling app.

Every call is recorded in `LLMCall`, one row per attempt (retries, re-asks, cache hits), with
tokens, latency, cost estimate and outcome. Identical requests are answered from the response
cache unless `use_cache=False`; pass a different seed to get a fresh sample (repeated judging).
Configurations with provider "offline" are answered by `llm.offline` without any network; their
results carry `is_offline=True` and must be shown with the "offline demo model" label.
"""

import json
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Generic, TypeVar

from django.conf import settings
from pydantic import BaseModel

from . import offline, transport
from .cache import cache_enabled, cache_lookup, cache_store
from .exceptions import LLMError, StructuredOutputError
from .models import CallOutcome, ModelConfiguration
from .recording import CallRecorder
from .request import PreparedRequest, json_validator, prepare_request
from .selectors import configuration_for_role

T = TypeVar("T", bound=BaseModel)


__all__ = [
    "ChatResult",
    "LLMError",
    "StructuredOutputError",
    "StructuredResult",
    "chat",
    "chat_for_role",
    "structured",
    "structured_for_role",
]


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
    call_ids: list[int] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class StructuredResult(ChatResult, Generic[T]):
    output: T | None = None


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _result(cls, *, recorder: CallRecorder, started: float, cached: bool, text: str, **extra):
    return cls(
        text=text,
        prompt_tokens=recorder.prompt_tokens,
        completion_tokens=recorder.completion_tokens,
        latency_ms=_elapsed_ms(started),
        cost=recorder.cost,
        cached=cached,
        is_offline=recorder.configuration.is_offline,
        configuration_id=recorder.configuration.pk,
        fingerprint=recorder.fingerprint,
        call_ids=list(recorder.call_ids),
        **extra,
    )


def chat(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    **params: Any,
) -> ChatResult:
    """A free-text reply. `params` override the configuration's request parameters."""
    started = time.monotonic()
    request = prepare_request(
        configuration=configuration, messages=messages, role=role, seed=seed, params=params
    )
    recorder = CallRecorder(
        configuration=configuration, role=role, purpose=purpose, fingerprint=request.fingerprint
    )
    if configuration.is_offline:
        text = offline.offline_chat_reply(
            messages=request.messages, seed=request.seed, configuration=configuration, role=role
        )
        _record_offline(recorder, request, text=text)
        return _result(ChatResult, recorder=recorder, started=started, cached=False, text=text)

    caching = cache_enabled(configuration=configuration, use_cache=use_cache)
    hit = cache_lookup(request.fingerprint) if caching else None
    if hit is not None:
        _record_cache_hit(recorder, request, text=hit.response_text, parsed=None, hit=hit)
        return _result(
            ChatResult, recorder=recorder, started=started, cached=True, text=hit.response_text
        )

    reply = transport.send(
        configuration=configuration,
        messages=request.messages,
        parameters=request.parameters,
        recorder=recorder,
    )
    if caching:
        cache_store(
            key=request.fingerprint,
            configuration=configuration,
            response_text=reply.text,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
    return _result(ChatResult, recorder=recorder, started=started, cached=False, text=reply.text)


def structured(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    schema: type[T],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
) -> StructuredResult[T]:
    """A reply validated against `schema`; re-asks with the validation error when it is not.

    Raises StructuredOutputError (carrying the last raw reply) once
    settings.LLM_STRUCTURED_REASKS re-asks are spent.
    """
    started = time.monotonic()
    request = prepare_request(
        configuration=configuration,
        messages=messages,
        role=role,
        seed=seed,
        params={},
        schema=schema,
    )
    recorder = CallRecorder(
        configuration=configuration, role=role, purpose=purpose, fingerprint=request.fingerprint
    )
    validate = json_validator(schema)

    if configuration.is_offline:
        data = offline.offline_structured_reply(
            schema=schema, messages=request.messages, seed=request.seed, configuration=configuration
        )
        text = json.dumps(data, ensure_ascii=False)
        try:
            output = validate(text)
        except transport.OutputRejected as exc:
            _record_offline(recorder, request, text=text, rejection=str(exc))
            raise StructuredOutputError(
                f"The offline demo model could not produce a valid {schema.__name__}; register "
                f"an offline responder for it. {exc}",
                raw_text=text,
                validation_error=str(exc),
                call_ids=recorder.call_ids,
            ) from exc
        _record_offline(recorder, request, text=text, parsed=output.model_dump(mode="json"))
        return _result(
            StructuredResult,
            recorder=recorder,
            started=started,
            cached=False,
            text=text,
            output=output,
        )

    caching = cache_enabled(configuration=configuration, use_cache=use_cache)
    hit = cache_lookup(request.fingerprint) if caching else None
    if hit is not None:
        try:
            output = validate(hit.response_text)
        except transport.OutputRejected:
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
    reply = None
    reasks = 0
    enlarged = False
    while True:
        reply = transport.send(
            configuration=configuration,
            messages=conversation,
            parameters=parameters,
            recorder=recorder,
            validate=validate,
        )
        if reply.accepted:
            if caching:
                cache_store(
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
        if reasks >= settings.LLM_STRUCTURED_REASKS:
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
    raise StructuredOutputError(
        f"{configuration.name} did not return a valid {schema.__name__} after "
        f"{settings.LLM_STRUCTURED_REASKS} re-asks. Last error: {reply.rejection[:300]}",
        raw_text=reply.text,
        validation_error=reply.rejection,
        call_ids=recorder.call_ids,
    )


def larger_token_limit(parameters: dict) -> int:
    """The limit for re-asking a reply that was cut off: twice the one that cut it."""
    current = parameters.get("max_tokens") or settings.LLM_CUTOFF_DEFAULT_MAX_TOKENS
    return int(current) * 2


def chat_for_role(
    *,
    role: str,
    messages: list[dict],
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    **params: Any,
) -> ChatResult:
    """`chat` with the role's default configuration (ApplicationError when there is none)."""
    return chat(
        configuration=configuration_for_role(role),
        messages=messages,
        role=role,
        purpose=purpose,
        seed=seed,
        use_cache=use_cache,
        **params,
    )


def structured_for_role(
    *,
    role: str,
    messages: list[dict],
    schema: type[T],
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
) -> StructuredResult[T]:
    """`structured` with the role's default configuration."""
    return structured(
        configuration=configuration_for_role(role),
        messages=messages,
        schema=schema,
        role=role,
        purpose=purpose,
        seed=seed,
        use_cache=use_cache,
    )


def _record_offline(
    recorder: CallRecorder,
    request: PreparedRequest,
    *,
    text: str,
    parsed: Any = None,
    rejection: str = "",
) -> None:
    prompt_text = " ".join(str(m.get("content") or "") for m in request.messages)
    recorder.record(
        messages=request.messages,
        parameters=request.parameters,
        outcome=CallOutcome.INVALID_OUTPUT if rejection else CallOutcome.SUCCESS,
        finish_reason="stop",
        response_text=text,
        parsed_json=parsed,
        error_message=rejection,
        prompt_tokens=offline.estimate_tokens(prompt_text),
        completion_tokens=offline.estimate_tokens(text),
    )


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
