"""The OpenAI-compatible provider's client, through the official `openai` SDK: the only module
of the platform that imports it.

Clients are created with `max_retries=0`: retries happen in `llm.attempts`, so every attempt
is recorded as its own call. Synchronous clients: one per process, endpoint and key. On an
event loop (the batch engine): an endpoint's connections are spread over clients of at most
`CONNECTIONS_PER_CLIENT` each, with HTTP/2 where the endpoint offers it, and the body is posted
as plain JSON without the client's typed arguments (it would walk and transform them field by
field). Parameters travel as the request body unchanged, so endpoint-specific ones (vLLM's
`top_k`, llama.cpp's `repeat_penalty`) pass through.
"""

import itertools
import json
import os
import random
import threading
from typing import Any, cast

import httpx2
import openai
from openai._base_client import make_request_options
from openai._models import construct_type
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from ..base import (
    ChatProvider,
    ChatRequest,
    Failure,
    HttpClients,
    ProviderReply,
    StoredCompletion,
    Usage,
)
from ..errors import ClientErrors, client_error_failure, excerpt, token_count
from ..ratelimits import rate_limits_of
from . import FACTS

# httpcore probes every idle connection of a pool (a socket system call each) whenever a
# request comes or goes, so a pool of C connections costs O(C) per call.
CONNECTIONS_PER_CLIENT = 8


class AsyncClients:
    """The clients of one event loop, in turn per endpoint and key."""

    def __init__(self, concurrency: int, http: HttpClients) -> None:
        self.concurrency = max(1, concurrency)
        self.http = http
        self._clients: dict[tuple[str, str], list[openai.AsyncOpenAI]] = {}
        self._turns: dict[tuple[str, str], itertools.cycle] = {}

    def client(self, base_url: str, api_key: str) -> openai.AsyncOpenAI:
        key = (base_url, api_key)
        turn = self._turns.get(key)
        if turn is None:
            shards = -(-self.concurrency // CONNECTIONS_PER_CLIENT)
            size = -(-self.concurrency // shards)
            clients = []
            for _ in range(shards):
                pool = httpx2.Limits(max_connections=size, max_keepalive_connections=size)
                http = self.http.async_client(limits=pool, http2=_h2_available())
                clients.append(
                    openai.AsyncOpenAI(
                        api_key=api_key, base_url=base_url, max_retries=0, http_client=http
                    )
                )
            self._clients[key] = clients
            turn = self._turns[key] = itertools.cycle(clients)
        return next(turn)

    async def close(self) -> None:
        for clients in self._clients.values():
            for client in clients:
                await client.close()
        self._clients.clear()
        self._turns.clear()


_ERRORS = ClientErrors(
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    status=openai.APIStatusError,
    base=openai.OpenAIError,
)


# One synchronous client (and connection pool) per process, endpoint and key.
_CLIENTS: dict[tuple[int, str, str], openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()


class OpenAICompatibleProvider(ChatProvider):
    facts = FACTS

    def client(self) -> openai.OpenAI:
        """The process's client for this endpoint and key; thread-safe."""
        # The pid is part of the key so forked Celery workers never share a parent's sockets.
        cache_key = (os.getpid(), self.base_url, self.api_key)
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(cache_key)
            if client is None:
                client = openai.OpenAI(
                    api_key=self.api_key,
                    base_url=self.base_url,
                    max_retries=0,
                    http_client=self.http.client(),
                )
                _CLIENTS[cache_key] = client
            return client

    def send(self, request: ChatRequest) -> ProviderReply:
        # The raw response, for its rate-limit headers; parsed as `create` would.
        raw = self.client().chat.completions.with_raw_response.create(
            model=self.model_name,
            # The platform's messages are OpenAI's chat messages, sent as they are.
            messages=cast(list[ChatCompletionMessageParam], request.messages),
            extra_body=request.parameters,
            timeout=self.config.timeout,
        )
        reply = reply_of(raw.parse())
        reply.rate_limits = rate_limits_of(raw.headers)
        return reply

    def async_session(self, *, concurrency: int) -> AsyncClients:
        return AsyncClients(concurrency, self.http)

    async def close_session(self, session: AsyncClients) -> None:
        await session.close()

    async def send_async(self, request: ChatRequest, *, session: AsyncClients) -> ProviderReply:
        client = session.client(self.base_url, self.api_key)
        raw = await client.post(
            "/chat/completions",
            body={"model": self.model_name, **request.parameters, "messages": request.messages},
            options=make_request_options(
                timeout=self.config.timeout,
                # Without retries the idempotency key needs no system call for its bits.
                idempotency_key=f"impactbench-{random.getrandbits(128):032x}",
                security={"bearer_auth": True},
            ),
            cast_to=httpx2.Response,  # the body and, for pacing, the rate-limit headers
        )
        reply = reply_of(_completion(raw.content))
        reply.rate_limits = rate_limits_of(raw.headers)
        return reply

    def stored_usage(self, metadata: dict[str, str]) -> StoredCompletion | None:
        # One attempt's key is unique: the first completion listed is the one.
        page = self.client().chat.completions.list(
            metadata=metadata, model=self.model_name, limit=1, timeout=self.config.timeout
        )
        for completion in page.data:
            return StoredCompletion(id=completion.id, usage=_usage(completion.usage))
        return None

    def classify(self, error: BaseException) -> Failure:
        return client_error_failure(
            error, facts=FACTS, where=self.where, timeout=self.config.timeout, errors=_ERRORS
        )


def reply_of(completion: Any) -> ProviderReply:
    """Text, finish reason and usage of a chat completion; `problem` when it carries no text."""
    usage = _usage(getattr(completion, "usage", None))
    problem = malformed_reason(completion)
    if problem:
        finish = _finish_reason(completion)
        refused = finish in FACTS.refusal_reasons
        if refused:
            problem = f"the provider withheld the reply (finish_reason {finish})"
        return ProviderReply(
            "", finish, usage, problem=problem, raw=_raw_text(completion), refused=refused
        )
    choice = completion.choices[0]
    return ProviderReply(
        text=choice.message.content, finish_reason=_finish_reason(completion), usage=usage
    )


def _finish_reason(completion: Any) -> str:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        return ""
    return str(getattr(choices[0], "finish_reason", None) or "")


def malformed_reason(completion: Any) -> str:
    """Why a 200 reply carries no usable text ("" when it does): what the error will say."""
    if isinstance(completion, str):
        # The client hands back the text of a body that does not say it is JSON.
        return "with a body that is not JSON"
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


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) if details is not None else 0
    return Usage(
        prompt_tokens=token_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=token_count(getattr(usage, "completion_tokens", 0)),
        cached_prompt_tokens=token_count(cached),
    )


def _raw_text(completion: Any) -> str:
    if isinstance(completion, str):
        return excerpt(completion)
    dump = getattr(completion, "model_dump_json", None)
    try:
        text = dump() if dump else str(completion)
    except Exception:  # noqa: BLE001 - the raw body is a courtesy for the call log
        text = repr(completion)
    return excerpt(text)


def _completion(body: bytes) -> ChatCompletion:
    """The reply as the client's model: validated in one pass by pydantic when it conforms
    (the client's own lenient construction walks it in Python), else built the client's way."""
    try:
        return ChatCompletion.model_validate_json(body)
    except ValueError:  # pydantic's ValidationError; a body that is not JSON raises again below
        # construct_type builds the type it is given (typed `object` by the SDK).
        return cast(ChatCompletion, construct_type(type_=ChatCompletion, value=json.loads(body)))


def _h2_available() -> bool:
    """HTTP/2 where the endpoint offers it: negotiated by ALPN over TLS, so an endpoint without
    it (and every plain-HTTP one) keeps HTTP/1.1. `LLM_HTTP2=0` turns it off; `h2` is a
    dependency, the check only keeps a trimmed install working."""
    if os.environ.get("LLM_HTTP2", "").lower() in ("0", "false", "no"):
        return False
    try:
        import h2  # noqa: F401 - only whether it is installed
    except ImportError:
        return False
    return True


PROVIDER_CLASS = OpenAICompatibleProvider
