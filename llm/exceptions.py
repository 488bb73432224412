"""Errors of the model gateway. They are ApplicationErrors: their message is shown as is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.exceptions import ApplicationError

if TYPE_CHECKING:
    from .models import LLMCall
    from .providers.base import Failure


class LLMError(ApplicationError):
    """A model call did not produce a usable reply. `call_ids` point at the recorded attempts."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
        call_ids: list[int] | None = None,
    ) -> None:
        super().__init__(message, extra={"status_code": status_code, "call_ids": call_ids or []})
        self.status_code = status_code
        self.retryable = retryable
        self.call_ids = call_ids or []
        # The recorded attempts themselves (their ids are known once a buffering sink wrote them).
        self.calls: list[LLMCall] = []
        # How the provider classified the last failed attempt.
        self.failure: Failure | None = None


class StructuredOutputError(LLMError):
    """The model kept replying with output that does not fit the requested schema."""

    def __init__(
        self, message: str, *, raw_text: str, validation_error: str, call_ids: list[int]
    ) -> None:
        super().__init__(message, call_ids=call_ids)
        self.raw_text = raw_text
        self.validation_error = validation_error
