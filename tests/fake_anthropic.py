"""A local server speaking Anthropic's Messages API (POST /v1/messages) as its public reference
describes it, scripted like tests/fake_openai.py (the same `Behaviour`s and responders).

It checks what the real service checks before answering: the key (`x-api-key`, or the
`Authorization: Bearer` header the current SDK sends), a dated `anthropic-version` header,
`model`, a positive integer `max_tokens`, `messages` alternating user/assistant and starting
with the user, no "system" role inside `messages` (the system prompt is the top-level `system`),
a `tool_choice` naming a declared tool, an `output_config.format` of type json_schema carrying a
schema, no unknown top-level fields. Errors have Anthropic's shape: `{"type": "error", "error":
{"type": ..., "message": ...}}`.

Replies: a `message` whose content is a `text` block, or a `tool_use` block when the request
forces a tool; `stop_reason` end_turn, tool_use or max_tokens (a Behaviour's
finish_reason="length"); usage with `input_tokens`, `output_tokens` and the prompt cache's
`cache_creation_input_tokens` / `cache_read_input_tokens`: a `system` block marked
`cache_control` of at least `CACHE_MIN_TOKENS` is written on first sight and read after.

Rate limits as in tests/fake_openai.py, in Anthropic's terms: the input-token limit counts
cache writes, not reads, and what is left is announced in `anthropic-ratelimit-input-tokens-*`
headers with the reset as an RFC 3339 time.
"""

import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from tests.fake_batches import AnthropicBatches
from tests.fake_openai import (
    DEFAULT_CONTENT,
    NOT_JSON_BODY,
    Behaviour,
    FakeOpenAIServer,
    RecordedRequest,
    _count_tokens,
)

# A dated version header is required; the SDK sends the one it was built for.
API_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
CACHE_MIN_TOKENS = 50  # the real minimum is 1,024 tokens (2,048 for Haiku); small for tests
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_FIELDS = {
    "model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k",
    "stop_sequences", "metadata", "tools", "tool_choice", "output_config", "stream",
    "thinking", "service_tier",
}  # fmt: skip


def error_body(status: int, message: str) -> dict:
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
    }


class AnthropicRequest(RecordedRequest):
    @property
    def system_text(self) -> str:
        system = self.body.get("system") or ""
        if isinstance(system, list):
            return "\n\n".join(block.get("text", "") for block in system)
        return system

    @property
    def messages(self) -> list[dict]:
        """The conversation with the system prompt first, as the shared responders read it."""
        rest = self.body.get("messages", [])
        return (
            [{"role": "system", "content": self.system_text}] if self.system_text else []
        ) + rest

    def param(self, name: str, default: Any = None) -> Any:
        return self.body.get(name, default)


class FakeAnthropicServer(FakeOpenAIServer):
    KEEPS_COMPLETIONS = False  # no stored completions to list in this API
    PATH = "/v1/messages"
    API_PREFIX = ""
    request_class = AnthropicRequest
    batches_class = AnthropicBatches

    def __init__(self, api_key: str = "") -> None:
        super().__init__()
        self.api_key = api_key  # "" accepts any key
        self._cached: set[str] = set()
        self._cache_lock = threading.Lock()

    def _invalid(self, request: AnthropicRequest) -> tuple[int, Any] | None:
        headers, body = request.headers, request.body
        bearer = headers.get("authorization", "")
        key = headers.get("x-api-key") or bearer.removeprefix("Bearer ")
        if not key or (self.api_key and key != self.api_key):
            return 401, error_body(401, "invalid x-api-key")
        if not API_VERSION.fullmatch(headers.get("anthropic-version", "")):
            return 400, error_body(400, "anthropic-version: header is required")
        unknown = set(body) - _FIELDS
        if unknown:
            return 400, error_body(400, f"{sorted(unknown)[0]}: Extra inputs are not permitted")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return 400, error_body(400, "model: Field required")
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return 400, error_body(400, "max_tokens: Field required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, error_body(400, "messages: at least one message is required")
        for index, message in enumerate(messages):
            expected = "user" if index % 2 == 0 else "assistant"
            if message.get("role") != expected:
                return 400, error_body(
                    400,
                    f"messages.{index}.role: roles must alternate between user and assistant, "
                    "starting with user",
                )
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            return 400, error_body(400, "system: Input should be a string or a list of blocks")
        if "tool_choice" in body:
            names = {tool.get("name") for tool in body.get("tools") or []}
            choice = body["tool_choice"]
            if choice.get("type") == "tool" and choice.get("name") not in names:
                return 400, error_body(400, "tool_choice.name: no tool with this name")
        for tool in body.get("tools") or []:
            if not isinstance(tool.get("input_schema"), dict):
                return 400, error_body(400, "tools.0.input_schema: Field required")
        output_format = (body.get("output_config") or {}).get("format")
        if output_format is not None and (
            output_format.get("type") != "json_schema"
            or not isinstance(output_format.get("schema"), dict)
        ):
            return 400, error_body(400, "output_config.format: a json_schema with a schema")
        return None

    def _usage(self, request: AnthropicRequest, content: str) -> dict:
        system = request.body.get("system")
        cached_tokens = 0
        if isinstance(system, list) and any("cache_control" in block for block in system):
            cached_tokens = _count_tokens(request.system_text)
        rest = " ".join(str(m.get("content") or "") for m in request.body.get("messages", []))
        usage = {
            "input_tokens": _count_tokens(rest),
            "output_tokens": _count_tokens(content),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if cached_tokens >= CACHE_MIN_TOKENS:
            key = f"{request.model}:{request.system_text}"
            with self._cache_lock:
                seen = key in self._cached
                self._cached.add(key)
            usage["cache_read_input_tokens" if seen else "cache_creation_input_tokens"] = (
                cached_tokens
            )
        elif request.system_text:
            usage["input_tokens"] += _count_tokens(request.system_text)
        return usage

    def _input_tokens(self, document: Any) -> int:
        # Anthropic's input-token limit counts cache writes but not cache reads.
        usage = document.get("usage") if isinstance(document, dict) else None
        if not isinstance(usage, dict):
            return 0
        return int(usage.get("input_tokens") or 0) + int(
            usage.get("cache_creation_input_tokens") or 0
        )

    def bill_of(self, model: str, usage: dict) -> tuple[str, int, int, int, int]:
        read, written = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
        total = usage["input_tokens"] + read + written
        return (model, total, usage["output_tokens"], read, written)

    def _limit_error(self, message: str) -> Any:
        return error_body(429, message)

    def _limit_headers(self, remaining: int, reset_seconds: float) -> dict[str, str]:
        reset = datetime.fromtimestamp(time.time() + reset_seconds, tz=UTC)
        return {
            "anthropic-ratelimit-input-tokens-limit": str(self.input_tokens_per_minute),
            "anthropic-ratelimit-input-tokens-remaining": str(remaining),
            "anthropic-ratelimit-input-tokens-reset": reset.isoformat().replace("+00:00", "Z"),
        }

    def _document(self, request: AnthropicRequest, behaviour: Behaviour) -> Any:
        if behaviour.body is not None:
            return behaviour.body
        if behaviour.status >= 400:
            return error_body(behaviour.status, f"scripted HTTP {behaviour.status}")
        if behaviour.malformed == "not_json":
            return NOT_JSON_BODY
        if behaviour.json is not None:
            content = json.dumps(behaviour.json)
        else:
            content = behaviour.content if behaviour.content is not None else DEFAULT_CONTENT
        forced = (request.body.get("tool_choice") or {}).get("name")
        stop = "max_tokens" if behaviour.finish_reason == "length" else "end_turn"
        if forced and behaviour.json is not None and stop != "max_tokens":
            blocks = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:20]}",
                    "name": forced,
                    "input": behaviour.json,
                }
            ]
            stop = "tool_use"
        else:
            blocks = [{"type": "text", "text": content}]
        if behaviour.malformed in ("no_choices", "null_content"):
            blocks = []
        elif behaviour.malformed == "empty_content":
            blocks = [{"type": "text", "text": ""}]
        usage = self._usage(request, content)
        if behaviour.prompt_tokens is not None:
            usage["input_tokens"] = behaviour.prompt_tokens
        if behaviour.completion_tokens is not None:
            usage["output_tokens"] = behaviour.completion_tokens
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
