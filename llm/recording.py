"""The attempt log of one gateway call: every attempt becomes an LLMCall row.

Where the row goes is the recorder's `sink`: by default it is written at once, outside any
transaction, so a crash mid-call still leaves the attempts that were paid for; the batch
engine passes a sink that buffers rows and writes them in bulk through `llm.bulk` (always
before the work they belong to is marked done). A sink with a `sending` method is also told of
each attempt before it is sent (as a row with outcome "unknown" and the attempt's number), so
it can journal the request and account for it if its process dies before the reply. Prompts
are stored once per distinct text (`PromptText`).
"""

import hashlib
import json
import random
import uuid
from collections.abc import Callable
from decimal import Decimal

from . import attribution
from .models import CallOutcome, LLMCall, ModelConfiguration, PromptText
from .providers.base import FailureOutcome, Usage

Sink = Callable[[LLMCall, PromptText], None]


def prompt_text(messages: list[dict]) -> PromptText:
    encoded = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return PromptText(sha256=hashlib.sha256(encoded.encode("utf-8")).hexdigest(), messages=messages)


def write_now(call: LLMCall, prompt: PromptText) -> None:
    PromptText.objects.bulk_create([prompt], ignore_conflicts=True)
    call.save(force_insert=True)


class CallRecorder:
    """Numbers the attempts of one gateway call and adds up what they cost."""

    def __init__(
        self,
        *,
        configuration: ModelConfiguration,
        role: str,
        purpose: str,
        fingerprint: str,
        sink: Sink | None = None,
    ) -> None:
        self.configuration = configuration
        self.role = role
        self.purpose = purpose
        self.fingerprint = fingerprint
        self.sink = sink or write_now
        # Not a secret: random bits are enough, without a system call per gateway call.
        self.group_id = uuid.UUID(int=random.getrandbits(128), version=4)
        self.calls: list[LLMCall] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = Decimal(0)

    @property
    def call_ids(self) -> list[int]:
        """Primary keys of the attempts (None for rows a buffering sink has not written yet)."""
        return [call.pk for call in self.calls]

    @property
    def attempts(self) -> int:
        return len(self.calls)

    def sending(self, *, messages: list[dict], parameters: dict) -> None:
        """Before an attempt leaves: tell a journaling sink what is sent (nothing is added up)."""
        journal = getattr(self.sink, "sending", None)
        if journal is not None:
            call, prompt = self._call(
                messages=messages, parameters=parameters, outcome=CallOutcome.UNKNOWN
            )
            journal(call, prompt)

    def record(
        self,
        *,
        messages: list[dict],
        parameters: dict,
        outcome: CallOutcome | FailureOutcome,
        response_text: str = "",
        parsed_json: object = None,
        error_message: str = "",
        http_status: int | None = None,
        finish_reason: str = "",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        usage: Usage | None = None,
        latency_ms: float = 0,
        limit_wait_ms: float = 0,
        backoff_ms: float = 0,
        batched: bool = False,
    ) -> LLMCall:
        usage = usage or Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        prompt_tokens, completion_tokens = usage.prompt_tokens, usage.completion_tokens
        # A cache hit costs nothing; offline output is free by definition.
        cost = (
            Decimal(0)
            if outcome == CallOutcome.CACHED
            else self.configuration.cost_estimate(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cached_prompt_tokens=usage.cached_prompt_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                batched=batched,
            )
        )
        call, prompt = self._call(
            messages=messages,
            parameters=parameters,
            outcome=outcome,
            response_text=response_text,
            parsed_json=parsed_json,
            error_message=error_message,
            http_status=http_status,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=latency_ms,
            limit_wait_ms=limit_wait_ms,
            backoff_ms=backoff_ms,
            cost=cost,
            usage=usage,
        )
        call.batched = batched
        self.sink(call, prompt)
        self.calls.append(call)
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost += cost
        return call

    def _call(
        self,
        *,
        messages: list[dict],
        parameters: dict,
        outcome: CallOutcome | FailureOutcome,
        response_text: str = "",
        parsed_json: object = None,
        error_message: str = "",
        http_status: int | None = None,
        finish_reason: str = "",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_ms: float = 0,
        limit_wait_ms: float = 0,
        backoff_ms: float = 0,
        cost: Decimal = Decimal(0),
        usage: Usage | None = None,
    ) -> tuple[LLMCall, PromptText]:
        """The row of the next attempt (numbered after those recorded so far)."""
        usage = usage or Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        made_for = attribution.current()
        prompt = prompt_text(messages)
        call = LLMCall(
            configuration=self.configuration,
            role=self.role,
            purpose=self.purpose,
            group_id=self.group_id,
            attempt=self.attempts + 1,
            fingerprint=self.fingerprint,
            prompt_id=prompt.sha256,
            parameters=parameters,
            response_text=response_text or "",
            parsed_json=parsed_json,
            outcome=outcome,
            error_message=error_message,
            http_status=http_status,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_prompt_tokens=usage.cached_prompt_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            latency_ms=max(0, int(latency_ms)),
            limit_wait_ms=max(0, int(limit_wait_ms)),
            backoff_ms=max(0, int(backoff_ms)),
            cost_estimate=cost,
            is_offline=self.configuration.is_offline,
            run_id=made_for.run_id,
            work_item=made_for.work_item,
            claim=made_for.claim,
        )
        return call, prompt
