"""What a provider's rate-limit headers say is left, and when it comes back.

OpenAI (and the servers that copy it) send `x-ratelimit-remaining-requests`/`-tokens` with
`x-ratelimit-reset-requests`/`-tokens` as durations ("1s", "6m0s", "250ms"); Anthropic sends
`anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}` with the
reset as an RFC 3339 time. Both become `RateLimits`: per kind ("requests", "tokens",
"input_tokens", "output_tokens"), what remains and in how many seconds it is replenished.
An absolute reset is turned into seconds on this host's clock, once, where the reply arrived.
"""

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

KINDS = ("requests", "tokens", "input_tokens", "output_tokens")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


@dataclass(frozen=True)
class RateLimits:
    remaining: dict[str, int] = field(default_factory=dict)
    reset_seconds: dict[str, float] = field(default_factory=dict)

    def pause_seconds(self, need: Mapping[str, int]) -> float:
        """How long to send nothing more: until the latest reset of a kind whose remainder is
        below what the next request needs (`need`, per kind; requests need 1). 0: no pause."""
        pause = 0.0
        for kind, left in self.remaining.items():
            if left < max(1, need.get(kind, 1)) and kind in self.reset_seconds:
                pause = max(pause, self.reset_seconds[kind])
        return pause


def duration_seconds(text: str) -> float | None:
    """OpenAI's reset durations ("1s", "6m0s", "1h2m3.5s", "20ms"); a bare number is seconds."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _rfc3339_seconds(text: str, now: float) -> float | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - now)


def _count(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def rate_limits_of(headers: Mapping[str, str] | None, *, now: float | None = None) -> RateLimits:
    """The rate-limit headers of a reply (any case); empty when it sends none."""
    if not headers:
        return RateLimits()
    lower = {k.lower(): v for k, v in headers.items()}
    now = time.time() if now is None else now
    remaining: dict[str, int] = {}
    reset: dict[str, float] = {}
    for kind in KINDS:
        dashed = kind.replace("_", "-")
        openai_left = _count(lower.get(f"x-ratelimit-remaining-{dashed}"))
        if openai_left is not None:
            remaining[kind] = openai_left
            seconds = duration_seconds(lower.get(f"x-ratelimit-reset-{dashed}", ""))
            if seconds is not None:
                reset[kind] = seconds
        anthropic_left = _count(lower.get(f"anthropic-ratelimit-{dashed}-remaining"))
        if anthropic_left is not None:
            remaining[kind] = anthropic_left
            at = lower.get(f"anthropic-ratelimit-{dashed}-reset")
            seconds = _rfc3339_seconds(at, now) if at else None
            if seconds is not None:
                reset[kind] = seconds
    return RateLimits(remaining, reset)
