"""The rate limits of the fake model servers (tests/fake_openai.py, tests/fake_anthropic.py):
an input-token-per-minute limit enforced with 429s, what is left announced in rate-limit headers,
and the pauses those headers (or scripted ones) announce held against the client."""

import re
import threading
import time
from collections import deque
from datetime import datetime
from typing import Any


class RateLimitedFake:
    """Mixed into the fake servers, which set these attributes in their constructor."""

    _lock: threading.Lock
    input_tokens_per_minute: int | None
    window_seconds: float
    token_window: deque[tuple[float, int]]
    peak_window_tokens: int
    refused: list[tuple[float, str]]
    paused_until: float

    def _input_tokens(self, document: Any) -> int:
        """The input tokens a reply's usage says count towards the limit (not cache reads)."""
        usage = document.get("usage") if isinstance(document, dict) else None
        if not isinstance(usage, dict):
            return 0
        details = usage.get("prompt_tokens_details") or {}
        return int(usage.get("prompt_tokens") or 0) - int(details.get("cached_tokens") or 0)

    def _limit_error(self, message: str) -> Any:
        return {"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}}

    def _limit_headers(self, remaining: int, reset_seconds: float) -> dict[str, str]:
        """What is left, announced; none here: OpenAI's token headers count input and output
        together (max_tokens included), which this input limit does not (the Anthropic fake
        announces its input tokens)."""
        return {}

    def _promised_pause(self, headers: dict[str, str], now: float) -> float:
        """Seconds from `now` until the latest reset of a header saying 0 remain (OpenAI's
        durations in s or ms, Anthropic's RFC 3339 times); 0 when none says so."""
        lower = {k.lower(): v for k, v in headers.items()}
        pause = 0.0
        for name, value in lower.items():
            if value.strip() != "0":
                continue
            if name.startswith("x-ratelimit-remaining-"):
                reset = lower.get(name.replace("-remaining-", "-reset-"), "")
                match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)", reset)
                if match:
                    unit = 0.001 if match.group(2) == "ms" else 1.0
                    pause = max(pause, float(match.group(1)) * unit)
            elif name.startswith("anthropic-ratelimit-") and name.endswith("-remaining"):
                reset = lower.get(name.removesuffix("-remaining") + "-reset", "")
                moment = datetime.fromisoformat(reset.replace("Z", "+00:00"))
                pause = max(pause, moment.timestamp() - now)
        return pause

    def _admit(self, request: Any, document: Any, status: int) -> tuple[int, Any, dict[str, str]]:
        """(status, body, headers) of the reply: a 429 when the request breaks a promised pause
        or the input TPM, else the reply with what is left announced."""
        now = time.monotonic()
        with self._lock:
            if now < self.paused_until:
                why = f"arrived {self.paused_until - now:.3f} s before the announced reset"
                self.refused.append((now, why))
                return 429, self._limit_error(f"Rate limit reached: {why}"), {}
            limit = self.input_tokens_per_minute
            if limit is None or status != 200:
                return status, document, {}
            while self.token_window and self.token_window[0][0] <= now - self.window_seconds:
                self.token_window.popleft()
            used = sum(tokens for _, tokens in self.token_window)
            tokens = self._input_tokens(document)
            if used + tokens > limit:
                why = f"input tokens per minute: {used} used, {tokens} asked, limit {limit}"
                self.refused.append((now, why))
                wait = self.token_window[0][0] + self.window_seconds - now
                return (
                    429,
                    self._limit_error(f"Rate limit reached: {why}"),
                    {"retry-after": f"{max(wait, 0.001):.3f}"},
                )
            self.token_window.append((now, tokens))
            self.peak_window_tokens = max(self.peak_window_tokens, used + tokens)
            reset = self.token_window[0][0] + self.window_seconds - now
            return status, document, self._limit_headers(limit - used - tokens, reset)
