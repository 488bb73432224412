"""The Anthropic provider's client: the Messages API through the official `anthropic` SDK.

The platform's request (OpenAI-shaped) becomes a Messages request: the system message goes to
`system` as one text block marked `cache_control: ephemeral`, so the long system prompts the
user simulator and the judge repeat on every call are read from Anthropic's prompt cache;
`max_tokens` is required (the configuration's, else `DEFAULT_MAX_TOKENS`); `seed` and the
sampling parameters (temperature, top_p, top_k) have no equivalent in the SDK's Messages
reference and are not sent (the call log keeps the platform's parameters as configured).
Structured output: `json_schema` asks for the API's JSON-schema output (`output_config.format`),
`json_object_schema` forces a tool call whose input schema is the schema (for models without
JSON-schema output), `prompt` sends neither. The stop reason is recorded with `max_tokens` read
as the platform's "length" (a cut-off reply). Usage counts cache reads and writes among the
input tokens, priced as the configuration says.
"""

import json
import os
import threading
from typing import Any

import anthropic

from ...schema_prompt import cached_json_schema
from ..base import ChatProvider, ChatRequest, Failure, ProviderReply, Usage
from ..errors import ClientErrors, client_error_failure, excerpt, token_count
from ..ratelimits import rate_limits_of
from . import FACTS

DEFAULT_MAX_TOKENS = 1024
TOOL_NAME = "reply"
# The platform's parameters the Messages API takes under the same name; the rest are dropped
# (the API takes no seed and, in the SDK's current reference, no sampling parameters;
# response_format and max_tokens are translated) or sent as they are (extra_params).
_SAME_NAME = ("stop_sequences", "metadata")
_DROPPED = ("seed", "response_format", "max_tokens", "temperature", "top_p", "top_k")


_ERRORS = ClientErrors(
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    status=anthropic.APIStatusError,
    base=anthropic.AnthropicError,
)


# One synchronous client per process, endpoint and key.
_CLIENTS: dict[tuple[int, str, str], anthropic.Anthropic] = {}
_CLIENTS_LOCK = threading.Lock()


class AnthropicProvider(ChatProvider):
    facts = FACTS

    def _client(self) -> anthropic.Anthropic:
        # The pid is part of the key so forked Celery workers never share a parent's sockets.
        key = (os.getpid(), self.base_url, self.api_key)
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = anthropic.Anthropic(
                    api_key=self.api_key,
                    base_url=self.base_url,
                    max_retries=0,
                    http_client=self.http.client(),
                )
                _CLIENTS[key] = client
            return client

    def send(self, request: ChatRequest) -> ProviderReply:
        # The raw response, for its rate-limit headers; parsed as `create` would.
        raw = self._client().messages.with_raw_response.create(
            **messages_request(self.model_name, request), timeout=self.config.timeout
        )
        reply = reply_of(raw.parse())
        reply.rate_limits = rate_limits_of(raw.headers)
        return reply

    def async_session(self, *, concurrency: int) -> dict:
        return {}

    async def close_session(self, session: dict) -> None:
        for client in session.values():
            await client.close()
        session.clear()

    async def send_async(self, request: ChatRequest, *, session: dict) -> ProviderReply:
        key = (self.base_url, self.api_key)
        client = session.get(key)
        if client is None:
            client = session[key] = anthropic.AsyncAnthropic(
                api_key=self.api_key,
                base_url=self.base_url,
                max_retries=0,
                http_client=self.http.async_client(),
            )
        raw = await client.messages.with_raw_response.create(
            **messages_request(self.model_name, request), timeout=self.config.timeout
        )
        # The async client's raw response parses asynchronously.
        reply = reply_of(await raw.parse())
        reply.rate_limits = rate_limits_of(raw.headers)
        return reply

    def classify(self, error: BaseException) -> Failure:
        return client_error_failure(
            error, facts=FACTS, where=self.where, timeout=self.config.timeout, errors=_ERRORS
        )


def messages_request(model: str, request: ChatRequest) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for the platform's request to `model`."""
    parameters = request.parameters
    system = "\n\n".join(
        str(m.get("content") or "") for m in request.messages if m.get("role") == "system"
    )
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": int(parameters.get("max_tokens") or DEFAULT_MAX_TOKENS),
        "messages": [
            {"role": m["role"], "content": str(m.get("content") or "")}
            for m in request.messages
            if m.get("role") != "system"
        ],
    }
    if system:
        # The shared prefix of every simulator and judge call: cached for five minutes.
        body["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    extra = {}
    for name, value in parameters.items():
        if name in _SAME_NAME:
            body[name] = value
        elif name not in _DROPPED:
            extra[name] = value
    if extra:
        body["extra_body"] = extra
    requested = parameters.get("response_format") or {}
    if request.schema is not None and requested:
        schema = cached_json_schema(request.schema)
        if requested.get("type") == "json_schema":
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        elif "schema" in requested:
            body["tools"] = [
                {
                    "name": TOOL_NAME,
                    "description": f"Give the reply as a {request.schema.__name__} object.",
                    "input_schema": schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
    return body


def reply_of(message: Any) -> ProviderReply:
    if isinstance(message, str):
        # The client hands back the text of a body that does not say it is JSON.
        return ProviderReply("", problem="with a body that is not JSON", raw=excerpt(message))
    usage = _usage(getattr(message, "usage", None))
    blocks = getattr(message, "content", None) or []
    tool_inputs = [b.input for b in blocks if getattr(b, "type", "") == "tool_use"]
    if tool_inputs:
        text = json.dumps(tool_inputs[0], ensure_ascii=False)
    else:
        text = "".join(
            getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", "") == "text"
        )
    stop = str(getattr(message, "stop_reason", "") or "")
    finish = "length" if stop == "max_tokens" else stop
    if not text.strip():
        raw = excerpt(message.model_dump_json()) if hasattr(message, "model_dump_json") else ""
        refused = stop in FACTS.refusal_reasons
        problem = (
            f"the model declined to answer (stop_reason {stop})"
            if refused
            else "the message has no text or tool input"
        )
        return ProviderReply("", finish, usage, problem=problem, raw=raw, refused=refused)
    return ProviderReply(text, finish, usage)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    plain = token_count(getattr(usage, "input_tokens", 0))
    read = token_count(getattr(usage, "cache_read_input_tokens", 0))
    written = token_count(getattr(usage, "cache_creation_input_tokens", 0))
    return Usage(
        prompt_tokens=plain + read + written,
        completion_tokens=token_count(getattr(usage, "output_tokens", 0)),
        cached_prompt_tokens=read,
        cache_write_tokens=written,
    )


PROVIDER_CLASS = AnthropicProvider
