"""The HTTP clients every provider hands its SDK (`openai`, `anthropic`, `google-genai` all take
an httpx2 client): each new connection resolves its host, checks every address against the
egress policy (`llm.egress`) and connects to a checked address, so the name is looked up once
per connection and DNS cannot answer one address to the check and another to the socket. TLS
still verifies the certificate for the URL's host name (httpcore sends it as SNI), and the Host
header is the URL's.

Redirects are not followed: a model API answers where it is asked, and a redirect is where a
request would leave the host its key is bound to. Proxies from the environment are not used:
the connection goes to the checked address itself.

Every connection's stream also tells the request it carries when it is handed to the kernel
(`on_sent`): the engine journals an attempt as sent then, not before it has a connection, so a
worker killed while a request waits for one (or fails to get one) leaves no attempt of unknown
outcome that never reached the provider.
"""

import asyncio
import contextlib
import contextvars
import functools
import os
import re
import ssl
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import anyio.to_thread
import httpcore2
import httpx2
import sniffio
from django.conf import settings
from django.utils.translation import gettext as _

from .egress import EgressRefused, checked_addresses

# The SDKs' own default: 100 connections, 20 kept alive.
DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20)

__all__ = [
    "EgressRefused",
    "async_client",
    "async_transport",
    "client",
    "on_sent",
    "transport",
]

# What to call when the current request is written. A request is sent by the task
# (or thread) that asked for it, which writes its own bytes, so a context variable reaches the
# stream with no change to the SDKs; announcing clears it (one call per request).
_pending: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "egress_pending", default=None
)


@contextlib.contextmanager
def on_sent(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` once, just before the request sent within this block is written to its
    connection; never, if it is not (no connection, a refused address)."""
    token = _pending.set(callback)
    try:
        yield
    finally:
        _pending.reset(token)


def _announce() -> None:
    callback = _pending.get()
    if callback is not None:
        _pending.set(None)
        callback()


_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)


def _holds_for_body(buffer: bytes) -> bool:
    """Whether `buffer` is an HTTP/1.1 request's head announcing a body, while a request waits
    to be announced. httpcore writes a request's head and body apart, and yields to the event
    loop between them (a busy engine's loop for tens of milliseconds): a worker killed there
    leaves a request the server never completes. Held back, the head goes out with the body in
    one write, announced just before it, so "sent" is true the moment it is journaled."""
    if _pending.get() is None or not buffer.endswith(b"\r\n\r\n"):
        return False
    line_end = buffer.find(b"\r\n")
    if not buffer[:line_end].endswith(b" HTTP/1.1"):
        return False  # an HTTP/2 connection's frames: announced on their first write
    length = _CONTENT_LENGTH.search(buffer, line_end)
    return length is not None and int(length.group(1)) > 0


class _Stream(httpcore2.NetworkStream):
    """A connection's stream that announces each request as its bytes are written."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner
        self._head = b""  # a request's head, held for its body

    def _flush(self) -> None:
        head, self._head = self._head, b""
        if head:
            _announce()
            self._inner.write(head)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush()  # a read before the body (never from httpcore) must not wait on it
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:  # h11's end of a sized body: nothing to send or announce
            return
        if not self._head and _holds_for_body(buffer):
            self._head = bytes(buffer)
            return
        buffer, self._head = self._head + buffer, b""
        _announce()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._head = b""  # never sent, never announced
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _AsyncStream(httpcore2.AsyncNetworkStream):
    """The same on an event loop. Between the announcement and the bytes reaching the kernel
    nothing yields: anyio's send writes to the transport before its first await."""

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner
        self._head = b""

    async def _flush(self) -> None:
        head, self._head = self._head, b""
        if head:
            _announce()
            await self._inner.write(head)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush()
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if not self._head and _holds_for_body(buffer):
            self._head = bytes(buffer)
            return
        buffer, self._head = self._head + buffer, b""
        _announce()
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        self._head = b""
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return _AsyncStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


def _addresses(host: str, port: int) -> list[str]:
    try:
        return [str(address) for address in checked_addresses(host, port)]
    except EgressRefused:
        raise
    except OSError as error:  # the name does not resolve: a connection error like any other
        raise httpcore2.ConnectError(f"Cannot resolve {host}: {error}") from error


class PinnedBackend(httpcore2.NetworkBackend):
    """httpcore's socket backend, connecting only to the addresses the policy accepts."""

    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore2.NetworkStream:
        error: Exception | None = None
        for address in _addresses(host, port):
            try:
                return _Stream(
                    self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as failed:
                error = failed
        raise error or httpcore2.ConnectError(f"No address for {host}")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore2.NetworkStream:
        raise EgressRefused(_("Model calls go over TCP only."))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# anyio's worker-thread default, for the lookups of the engine's new connections.
LOOKUP_THREADS = 40


@functools.cache
def _lookup_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=LOOKUP_THREADS, thread_name_prefix="egress-lookup")


async def _addresses_async(host: str, port: int) -> list[str]:
    """`_addresses` in a worker thread. On asyncio not through `anyio.to_thread`: on a loop
    run by `run_forever` (the engine's) anyio looks for its root task among ALL the loop's
    tasks on every call, a scan of every conversation under way for each new connection."""
    if sniffio.current_async_library() != "asyncio":
        return await anyio.to_thread.run_sync(_addresses, host, port)
    return await asyncio.get_running_loop().run_in_executor(_lookup_pool(), _addresses, host, port)


class AsyncPinnedBackend(httpcore2.AsyncNetworkBackend):
    """The same on an event loop (the batch engine); the lookup runs in a worker thread."""

    def __init__(self) -> None:
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        error: Exception | None = None
        for address in await _addresses_async(host, port):
            try:
                return _AsyncStream(
                    await self._inner.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as failed:
                error = failed
        raise error or httpcore2.ConnectError(f"No address for {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise EgressRefused(_("Model calls go over TCP only."))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _pinned(transport, backend):  # noqa: ANN001, ANN202 - either transport class
    pool = transport._pool  # noqa: SLF001 - httpx2 offers no other way to give the pool a backend
    if not hasattr(pool, "_network_backend"):  # pragma: no cover - an httpcore2 upgrade
        raise RuntimeError("httpcore2's pool no longer takes a network backend this way")
    pool._network_backend = backend  # noqa: SLF001
    return transport


def _ssl_context(http2: bool) -> ssl.SSLContext:
    """One verifying TLS context per process and protocol set, shared by every transport.

    Building one loads the CA bundle (tens of milliseconds of CPU); the engine makes a client
    per 8 connections, so 2,048 in flight would build 256 of them on its event loop before the
    first request. httpcore sets the ALPN protocols on the context before each handshake:
    transports sharing a context all set the same ones, hence one context per `http2`. The
    CA locations a context was built from (SSL_CERT_FILE, SSL_CERT_DIR) are part of the key.
    """
    return _ssl_context_for(http2, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context_for(http2: bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def transport(*, limits: httpx2.Limits | None = None, http2: bool = False) -> httpx2.HTTPTransport:
    """A transport whose connections go only where the egress policy allows."""
    return _pinned(
        httpx2.HTTPTransport(
            limits=limits or DEFAULT_LIMITS, http2=http2, verify=_ssl_context(http2)
        ),
        PinnedBackend(),
    )


def async_transport(
    *, limits: httpx2.Limits | None = None, http2: bool = False
) -> httpx2.AsyncHTTPTransport:
    return _pinned(
        httpx2.AsyncHTTPTransport(
            limits=limits or DEFAULT_LIMITS, http2=http2, verify=_ssl_context(http2)
        ),
        AsyncPinnedBackend(),
    )


def client(*, limits: httpx2.Limits | None = None) -> httpx2.Client:
    """The synchronous client a provider's SDK sends through."""
    return httpx2.Client(
        transport=transport(limits=limits),
        timeout=settings.LLM_TIMEOUT_SECONDS,
        follow_redirects=False,
    )


def async_client(*, limits: httpx2.Limits | None = None, http2: bool = False) -> httpx2.AsyncClient:
    """The client of one event loop."""
    return httpx2.AsyncClient(
        transport=async_transport(limits=limits, http2=http2),
        timeout=settings.LLM_TIMEOUT_SECONDS,
        follow_redirects=False,
    )
