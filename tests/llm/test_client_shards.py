"""Thousands in flight: the engine's client shards share one TLS context.

The engine makes an AsyncOpenAI client per 8 connections of an endpoint, so 2,048 in flight
means 256 clients made on the event loop. Each used to build its own TLS context (the CA bundle
read and parsed, tens of milliseconds of CPU), which held the loop for minutes on a loaded
machine before the first request left (`benchmarks/in_flight.py`).
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from llm import egress_http
from llm.providers.openai_compat import CONNECTIONS_PER_CLIENT, AsyncClients


def _contexts(clients) -> set[int]:
    return {id(client._client._transport._pool._ssl_context) for client in clients}  # noqa: SLF001


def test_every_shard_of_every_endpoint_shares_one_tls_context():
    clients = AsyncClients(concurrency=2048)
    made = {
        id(clients.client(base, "key"))
        for base in ("https://a.example/v1", "https://b.example/v1")
        for _ in range(2048 // CONNECTIONS_PER_CLIENT)
    }
    shards = list(clients._clients.values())  # noqa: SLF001
    assert len(made) == 2 * 2048 // CONNECTIONS_PER_CLIENT
    assert len(_contexts(client for shard in shards for client in shard)) == 1
    # On a thread of its own: an earlier test in the process (a browser's sync API) may have
    # left an event loop running on this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, clients.close()).result()


def test_http1_and_http2_transports_keep_their_own_context():
    # httpcore sets the ALPN protocols on the context before each handshake: a context shared
    # between HTTP/1.1-only and HTTP/2 transports would hand one the other's protocols.
    one = egress_http.async_transport(http2=False)._pool._ssl_context  # noqa: SLF001
    two = egress_http.async_transport(http2=True)._pool._ssl_context  # noqa: SLF001
    assert one is egress_http.transport(http2=False)._pool._ssl_context  # noqa: SLF001
    assert one is not two
    assert two is egress_http.async_transport(http2=True)._pool._ssl_context  # noqa: SLF001
