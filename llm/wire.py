"""The moment a request is on the wire, told to whoever sends it.

The engine journals an attempt as "sent" so that, if its process is killed before the reply,
the attempt is still accounted for (`evaluations/engine/journal.py`). Journaled too early (before
the request is built, encoded and written), a kill leaves attempts in the log that the endpoint
never received. So the drivers set a callback for the attempt (`on_sent`) and the platform's
HTTP transports (`llm.egress_http`) call it once the request's last byte has been handed to the
operating system, which delivers it even if the process dies the next instant. Per task and
thread (a context variable): concurrent attempts on one event loop each have their own.
"""

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

_callback: ContextVar[Callable[[], None] | None] = ContextVar("llm_on_sent", default=None)
_SENT = frozenset({"http11.send_request_body.complete", "http2.send_request_body.complete"})


@contextlib.contextmanager
def on_sent(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` once, when the request sent inside this block has been written."""
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


def _written(event: str) -> None:
    if event in _SENT:
        callback = _callback.get()
        if callback is not None:
            _callback.set(None)  # once per attempt
            callback()


def trace(event: str, info: dict[str, Any]) -> None:
    """httpcore's `trace` request extension, synchronous clients."""
    _written(event)


async def trace_async(event: str, info: dict[str, Any]) -> None:
    """httpcore's `trace` request extension, asynchronous clients."""
    _written(event)
