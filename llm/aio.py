"""The gateway's steps (`llm.plan`) driven on an event loop, for the batch engine.

One `openai.AsyncOpenAI` client per endpoint and key per event loop (the engine keeps one loop
per process), with a connection pool sized to the engine's concurrency and HTTP/2 where the
endpoint offers it; limits come from
`llm.permits` pools; the call log and the cache go through the caller's `CallSink`, which
buffers rows and writes them in bulk.
"""

import asyncio
import itertools
import json
import os
import random
import time
from typing import Any, Protocol

import httpx2
import openai
from django.conf import settings
from openai._base_client import make_request_options
from openai._models import construct_type
from openai.types.chat import ChatCompletion

from .attempts import Attempt, AttemptOutcome, Wait
from .exceptions import LLMError
from .limits import has_limits
from .models import LLMCall, LLMResponseCache, PromptText
from .permits import PermitPool, blocks_for
from .plan import CacheLookup, CacheStore

# httpcore probes every idle connection of a pool (a socket system call each) whenever a
# request comes or goes, so a pool of C connections costs O(C) per call: the engine spreads
# an endpoint's connections over clients of at most this many.
CONNECTIONS_PER_CLIENT = 8


class CallSink(Protocol):
    """Where the engine's call log and cache go (a bulk recorder)."""

    def record(self, call: LLMCall, prompt: PromptText) -> None: ...

    def cache_store(self, step: CacheStore) -> None: ...

    async def cache_lookup(self, key: str) -> LLMResponseCache | None: ...

    async def run_sync(self, fn, *args) -> Any: ...


class AsyncGateway:
    """Shared clients and permit pools of one event loop."""

    def __init__(self, *, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self._clients: dict[tuple[str, str], list[openai.AsyncOpenAI]] = {}
        self._turns: dict[tuple[str, str], itertools.cycle] = {}
        self._pools: dict[int, PermitPool] = {}
        self._blocks = None
        # The database threads of the batches running on this loop (the database limits
        # backend writes through whichever is live; a finished batch's thread serves no more).
        self._runners: list = []

    def bind(self, run_sync) -> None:
        self._runners.append(run_sync)

    def unbind(self, run_sync) -> None:
        self._runners.remove(run_sync)

    async def run_sync(self, fn, *args) -> Any:
        return await self._runners[-1](fn, *args)

    def client(self, base_url: str, api_key: str) -> openai.AsyncOpenAI:
        """One of the endpoint's clients, in turn (together they hold `concurrency` connections)."""
        key = (base_url, api_key)
        turn = self._turns.get(key)
        if turn is None:
            shards = -(-self.concurrency // CONNECTIONS_PER_CLIENT)
            size = -(-self.concurrency // shards)
            clients = []
            for _ in range(shards):
                pool = httpx2.Limits(max_connections=size, max_keepalive_connections=size)
                http = openai.DefaultAsyncHttpx2Client(limits=pool, http2=_h2_available())
                clients.append(
                    openai.AsyncOpenAI(
                        api_key=api_key, base_url=base_url, max_retries=0, http_client=http
                    )
                )
            self._clients[key] = clients
            turn = self._turns[key] = itertools.cycle(clients)
        return next(turn)

    def pool(self, configuration, sink: CallSink) -> PermitPool:
        pool = self._pools.get(configuration.pk)
        if pool is None:
            if self._blocks is None:
                self._blocks = blocks_for(self.run_sync)
            pool = PermitPool(configuration, self._blocks)
            self._pools[configuration.pk] = pool
        else:
            pool.configuration = configuration  # limits edited since are honoured
        return pool

    async def maintain(self, *, final: bool = False) -> None:
        for pool in list(self._pools.values()):
            await pool.maintain(final=final)

    async def attempt(self, step: Attempt, sink: CallSink) -> AttemptOutcome:
        pool = self.pool(step.configuration, sink) if has_limits(step.configuration) else None
        member, waited = None, 0.0
        if pool is not None:
            try:
                member, waited = await pool.acquire()
            except LLMError as exc:
                return AttemptOutcome(limit_error=exc)
        client = self.client(step.configuration.endpoint, step.api_key)
        started = time.monotonic()
        try:
            # The body is plain JSON already: posted as it is, without the typed arguments of
            # `chat.completions.create`, which the client would walk and transform field by
            # field. Without retries the idempotency key needs no system call for its bits.
            raw = await client.post(
                "/chat/completions",
                body={
                    "model": step.configuration.model_id,
                    **step.parameters,
                    "messages": step.messages,
                },
                options=make_request_options(
                    timeout=settings.LLM_TIMEOUT_SECONDS,
                    idempotency_key=f"impactbench-{random.getrandbits(128):032x}",
                    security={"bearer_auth": True},
                ),
                cast_to=bytes,
            )
            completion = _completion(raw)
        except (openai.OpenAIError, ValueError) as exc:
            return AttemptOutcome(
                error=exc,
                latency_ms=(time.monotonic() - started) * 1000,
                limit_wait_ms=int(waited * 1000),
            )
        finally:
            if member is not None:
                pool.release(member)
        return AttemptOutcome(
            completion=completion,
            latency_ms=(time.monotonic() - started) * 1000,
            limit_wait_ms=int(waited * 1000),
        )

    async def drive(self, steps, sink: CallSink) -> Any:
        """Run a gateway call's steps (`llm.plan`) on this loop."""
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value
            if isinstance(step, Attempt):
                reply = await self.attempt(step, sink)
            elif isinstance(step, Wait):
                await asyncio.sleep(step.seconds)
                reply = None
            elif isinstance(step, CacheLookup):
                reply = await sink.cache_lookup(step.key)
            elif isinstance(step, CacheStore):
                sink.cache_store(step)
                reply = None
            else:  # pragma: no cover - a programming error
                raise TypeError(f"Unknown gateway step {step!r}")

    async def close(self) -> None:
        await self.maintain(final=True)
        for clients in self._clients.values():
            for client in clients:
                await client.close()
        self._clients.clear()
        self._turns.clear()


def _completion(body: bytes) -> ChatCompletion:
    """The reply as the client's model: validated in one pass by pydantic when it conforms
    (the client's own lenient construction walks it in Python), else built the client's way."""
    try:
        return ChatCompletion.model_validate_json(body)
    except ValueError:  # pydantic's ValidationError; a body that is not JSON raises again below
        return construct_type(type_=ChatCompletion, value=json.loads(body))


def _h2_available() -> bool:
    """HTTP/2 where the endpoint offers it: negotiated by ALPN over TLS, so an endpoint without
    it (and every plain-HTTP one) keeps HTTP/1.1. `LLM_HTTP2=0` turns it off; `h2` is a
    dependency, the check only keeps a trimmed install working."""
    if os.environ.get("LLM_HTTP2", "").lower() in ("0", "false", "no"):
        return False
    try:
        import h2  # noqa: F401
    except ImportError:
        return False
    return True
