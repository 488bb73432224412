"""A local server speaking the Gemini API's `models.generateContent` as its public reference
describes it, scripted like tests/fake_openai.py (the same `Behaviour`s and responders).

It checks the `x-goog-api-key` header, `contents` (roles "user" and "model", each with text
`parts`), a `systemInstruction` of parts, and a `generationConfig` whose `responseJsonSchema`
or `responseSchema` comes with `responseMimeType: application/json`. Errors have Google's
shape (`{"error": {"code", "message", "status", "details"}}`); a 429 carries a RetryInfo
`retryDelay`. Replies: one candidate with text parts, `finishReason` STOP or MAX_TOKENS, and
`usageMetadata` with prompt, candidates and (implicitly) cached token counts: a system
instruction of at least `CACHE_MIN_TOKENS` seen before counts as cached.

Google's refusals in its own words: `unknown_fields` answers a generationConfig field
(`responseJsonSchema`, `responseSchema`, `responseMimeType`) as an API version without it does
(400 INVALID_ARGUMENT 'Unknown name "responseJsonSchema" at 'generation_config'', with a
BadRequest field violation; `knows_json_schema = False` is the first alone),
`json_mode = False` answers any JSON output as a model without it does (400 "JSON mode is not
enabled for models/…", no details); `blocked(reason)` is a reply to a prompt the API
blocked (no candidates, `promptFeedback.blockReason`), `withheld(reason)` one whose candidate
was stopped (`finishReason` SAFETY, RECITATION…) before any text.
"""

import json
import re
import threading
from typing import Any

from tests.fake_openai import (
    DEFAULT_CONTENT,
    NOT_JSON_BODY,
    Behaviour,
    FakeOpenAIServer,
    RecordedRequest,
    _count_tokens,
)

CACHE_MIN_TOKENS = 50
_PATH = re.compile(r"^/(v1|v1beta)/models/([^/:]+):generateContent$")
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def blocked(reason: str, prompt_tokens: int = 9) -> dict:
    """The body of a reply to a prompt the API blocked."""
    return {
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
    }


def withheld(reason: str, prompt_tokens: int = 9) -> dict:
    """The body of a reply whose only candidate was stopped before any text."""
    return {
        "candidates": [{"finishReason": reason, "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
    }


def error_body(code: int, message: str, retry_delay: str = "", details: list | None = None) -> dict:
    """Google's error shape; `details` only when there are some, as the API leaves it out."""
    details = list(details or [])
    if retry_delay:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        )
    error: dict[str, Any] = {
        "code": code,
        "message": message,
        "status": STATUS_NAMES.get(code, "UNKNOWN"),
    }
    if details:
        error["details"] = details
    return {"error": error}


def unknown_field_body(name: str, parent: str = "generation_config") -> dict:
    """What an API version answers to a field it does not know: the message, and the field
    violation in a BadRequest detail."""
    message = (
        f"Invalid JSON payload received. Unknown name \"{name}\" at '{parent}': Cannot find field."
    )
    violation = {"field": parent, "description": message}
    return error_body(
        400,
        message,
        details=[
            {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}
        ],
    )


class GeminiRequest(RecordedRequest):
    @property
    def model(self) -> str:
        match = _PATH.match(self.path.split("?")[0])
        return match.group(2) if match else ""

    @property
    def system_text(self) -> str:
        parts = (self.body.get("systemInstruction") or {}).get("parts") or []
        return "".join(p.get("text", "") for p in parts)

    @property
    def messages(self) -> list[dict]:
        """The conversation in the platform's shape, as the shared responders read it."""
        turns = [
            {
                "role": "assistant" if c.get("role") == "model" else "user",
                "content": "".join(p.get("text", "") for p in c.get("parts") or []),
            }
            for c in self.body.get("contents") or []
        ]
        return (
            [{"role": "system", "content": self.system_text}] if self.system_text else []
        ) + turns

    @property
    def generation_config(self) -> dict:
        return self.body.get("generationConfig") or {}


class FakeGeminiServer(FakeOpenAIServer):
    KEEPS_COMPLETIONS = False  # no stored completions to list in this API
    API_PREFIX = ""
    request_class = GeminiRequest

    def __init__(self, api_key: str = "") -> None:
        super().__init__()
        self.api_key = api_key
        # generationConfig fields this API version does not know ("responseJsonSchema",
        # "responseSchema", "responseMimeType"): a request naming one is answered 400.
        self.unknown_fields: set[str] = set()
        self.json_mode = True
        self._seen: set[str] = set()
        self._seen_lock = threading.Lock()

    @property
    def knows_json_schema(self) -> bool:
        return "responseJsonSchema" not in self.unknown_fields

    @knows_json_schema.setter
    def knows_json_schema(self, value: bool) -> None:
        (self.unknown_fields.discard if value else self.unknown_fields.add)("responseJsonSchema")

    def _serves(self, path: str) -> bool:
        return bool(_PATH.match(path))

    def _invalid(self, request: GeminiRequest) -> tuple[int, Any] | None:
        key = request.headers.get("x-goog-api-key", "")
        if not key or (self.api_key and key != self.api_key):
            return 400, error_body(400, "API key not valid. Please pass a valid API key.")
        contents = request.body.get("contents")
        if not isinstance(contents, list) or not contents:
            return 400, error_body(
                400, "* GenerateContentRequest.contents: contents is not specified"
            )
        for index, content in enumerate(contents):
            if content.get("role") not in ("user", "model"):
                return 400, error_body(
                    400, f"contents[{index}].role: Please use a valid role: user, model."
                )
            parts = content.get("parts")
            if not parts or not all(isinstance(p.get("text"), str) for p in parts):
                return 400, error_body(400, f"contents[{index}].parts: must contain text parts")
        config = request.generation_config
        for name in sorted(self.unknown_fields & set(config)):
            return 400, unknown_field_body(name)
        if config.get("responseMimeType") == "application/json" and not self.json_mode:
            return 400, error_body(400, f"JSON mode is not enabled for models/{request.model}")
        if ("responseJsonSchema" in config or "responseSchema" in config) and config.get(
            "responseMimeType"
        ) != "application/json":
            return 400, error_body(
                400, "responseMimeType must be application/json when a response schema is set"
            )
        return None

    def _document(self, request: GeminiRequest, behaviour: Behaviour) -> Any:
        if behaviour.body is not None:
            return behaviour.body
        if behaviour.status >= 400:
            delay = "0s" if behaviour.status == 429 else ""
            return error_body(behaviour.status, f"scripted HTTP {behaviour.status}", delay)
        if behaviour.malformed == "not_json":
            return NOT_JSON_BODY
        if behaviour.json is not None:
            content = json.dumps(behaviour.json)
        else:
            content = behaviour.content if behaviour.content is not None else DEFAULT_CONTENT
        finish = "MAX_TOKENS" if behaviour.finish_reason == "length" else "STOP"
        candidate = {
            "content": {"role": "model", "parts": [{"text": content}]},
            "finishReason": finish,
            "index": 0,
        }
        if behaviour.malformed in ("no_choices",):
            candidates = []
        elif behaviour.malformed in ("null_content", "empty_content"):
            candidate["content"] = {"role": "model", "parts": []}
            candidates = [candidate]
        else:
            candidates = [candidate]
        prompt_text = " ".join(m["content"] for m in request.messages)
        prompt = (
            _count_tokens(prompt_text)
            if behaviour.prompt_tokens is None
            else behaviour.prompt_tokens
        )
        cached = 0
        system_tokens = _count_tokens(request.system_text) if request.system_text else 0
        if system_tokens >= CACHE_MIN_TOKENS:
            key = f"{request.model}:{request.system_text}"
            with self._seen_lock:
                cached = system_tokens if key in self._seen else 0
                self._seen.add(key)
        output = (
            _count_tokens(content)
            if behaviour.completion_tokens is None
            else behaviour.completion_tokens
        )
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output,
        }
        if cached:
            usage["cachedContentTokenCount"] = cached
        return {"candidates": candidates, "usageMetadata": usage, "modelVersion": request.model}
