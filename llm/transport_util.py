"""What the synchronous and the asynchronous transport share: keys, backoff, reply checks."""

import email.utils
import os
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import openai
from django.conf import settings

from .exceptions import LLMError
from .keys import api_key_env_problem
from .models import ModelConfiguration

# Local servers without authentication still need some key: the client refuses to start without.
NO_AUTH_API_KEY = "no-key-required"
ERROR_DETAIL_LIMIT = 500


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


def error_detail(exc: openai.APIStatusError) -> str:
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - the body is a courtesy for the error message
        text = ""
    return (text or str(exc))[:ERROR_DETAIL_LIMIT]


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


def usage_tokens(usage: Any, name: str) -> int:
    value = getattr(usage, name, 0) if usage is not None else 0
    return value if isinstance(value, int) and value > 0 else 0


def raw_text(completion: Any) -> str:
    dump = getattr(completion, "model_dump_json", None)
    try:
        text = dump() if dump else str(completion)
    except Exception:  # noqa: BLE001 - the raw body is a courtesy for the call log
        text = repr(completion)
    return text[:ERROR_DETAIL_LIMIT]
