"""The attempt log of one gateway call: every attempt becomes an LLMCall row as it happens.

Rows are written one by one outside any transaction, so a crash mid-call still leaves the
attempts that were paid for.
"""

import uuid
from decimal import Decimal

from . import attribution
from .models import CallOutcome, LLMCall, ModelConfiguration


class CallRecorder:
    """Numbers the attempts of one gateway call and adds up what they cost."""

    def __init__(
        self, *, configuration: ModelConfiguration, role: str, purpose: str, fingerprint: str
    ) -> None:
        self.configuration = configuration
        self.role = role
        self.purpose = purpose
        self.fingerprint = fingerprint
        self.group_id = uuid.uuid4()
        self.call_ids: list[int] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = Decimal(0)

    @property
    def attempts(self) -> int:
        return len(self.call_ids)

    def record(
        self,
        *,
        messages: list[dict],
        parameters: dict,
        outcome: CallOutcome,
        response_text: str = "",
        parsed_json: object = None,
        error_message: str = "",
        http_status: int | None = None,
        finish_reason: str = "",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_ms: int = 0,
        limit_wait_ms: int = 0,
        backoff_ms: float = 0,
    ) -> LLMCall:
        # A cache hit costs nothing; offline output is free by definition.
        cost = (
            Decimal(0)
            if outcome == CallOutcome.CACHED
            else self.configuration.cost_estimate(
                prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
        )
        made_for = attribution.current()
        call = LLMCall.objects.create(
            configuration=self.configuration,
            role=self.role,
            purpose=self.purpose,
            group_id=self.group_id,
            attempt=self.attempts + 1,
            fingerprint=self.fingerprint,
            messages=messages,
            parameters=parameters,
            response_text=response_text or "",
            parsed_json=parsed_json,
            outcome=outcome,
            error_message=error_message,
            http_status=http_status,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=max(0, int(latency_ms)),
            limit_wait_ms=max(0, int(limit_wait_ms)),
            backoff_ms=max(0, int(backoff_ms)),
            cost_estimate=cost,
            is_offline=self.configuration.is_offline,
            run_id=made_for.run_id,
            work_item=made_for.work_item,
            claim=made_for.claim,
        )
        self.call_ids.append(call.pk)
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost += cost
        return call
