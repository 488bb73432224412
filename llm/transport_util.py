"""What the drivers and the retry policy share: keys, backoff; Retry-After is read by the
providers (`llm.providers.errors`)."""

import os
import random
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from .egress import EgressRefused, request_check
from .exceptions import LLMError
from .models import ModelConfiguration
from .providers.errors import retry_after_seconds

# Local servers without authentication still need some key: clients refuse to start without.
NO_AUTH_API_KEY = "no-key-required"


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
    """The key, read from the environment at call time so rotating it needs no restart, for
    an endpoint the egress policy lets it go to (`llm.egress`)."""
    # Checked again at call time: rows saved before the policy, or written outside the forms.
    try:
        request_check(configuration)
    except EgressRefused as refused:
        raise LLMError(refused.message) from None
    if not configuration.api_key_env:
        return NO_AUTH_API_KEY
    key = os.environ.get(configuration.api_key_env, "")
    if not key:
        raise LLMError(
            _(
                "Set the environment variable %(variable)s for "
                "configuration %(configuration_name)r: it should hold the API "
                "key for %(endpoint)s."
            )
            % {
                "variable": configuration.api_key_env,
                "configuration_name": configuration.name,
                "endpoint": configuration.endpoint,
            }
        )
    return key


def backoff_delay(retry_index: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number `retry_index` (0-based)."""
    cap = settings.LLM_BACKOFF_MAX_SECONDS
    if retry_after is not None:
        return max(0.0, min(retry_after, cap))
    ceiling = min(cap, settings.LLM_BACKOFF_BASE_SECONDS * (2**retry_index))
    return random.uniform(0, ceiling)  # noqa: S311 - jitter spreads retries, not a secret


__all__ = [
    "NO_AUTH_API_KEY",
    "OutputRejected",
    "TransportReply",
    "api_key_for",
    "backoff_delay",
    "retry_after_seconds",
]
