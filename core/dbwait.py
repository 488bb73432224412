"""A bound on how long a process waits for PostgreSQL to answer a statement.

`statement_timeout` (set per connection in settings) ends a slow statement on the server, but
a server that accepts connections and never answers — a frozen host, a stuck proxy — never
enforces it, and the client would wait forever (a web worker until gunicorn kills it). Every
statement is therefore watched: one watchdog thread per process shuts the connection's socket
down once a statement has waited DATABASE_CLIENT_TIMEOUT_SECONDS (the statement timeout plus a
margin), which turns the wait into an OperationalError the caller handles like a dropped
connection. The liveness ping Django sends on a reused connection is watched the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper

if TYPE_CHECKING:
    from psycopg import Connection

R = TypeVar("R")

logger = logging.getLogger(__name__)
# id of a wait -> (deadline, raw connection)
_watched: dict[int, tuple[float, Connection[Any]]] = {}
_lock = threading.Lock()
# The mark a connection wrapper carries once its statements are watched.
_WATCHED = "_watched"
_started = False


@contextlib.contextmanager
def wait_limited(raw: Connection[Any], seconds: float) -> Iterator[None]:
    """Within this block, `raw` (a psycopg connection) is cut off after `seconds`."""
    _ensure_watchdog()
    token = object()
    with _lock:
        _watched[id(token)] = (time.monotonic() + seconds, raw)
    try:
        yield
    finally:
        with _lock:
            _watched.pop(id(token), None)


def _ensure_watchdog() -> None:
    global _started
    if _started:
        return
    with _lock:
        if not _started:
            threading.Thread(target=_watch, name="database-wait", daemon=True).start()
            _started = True


def _watch() -> None:
    while True:
        time.sleep(0.25)
        now = time.monotonic()
        with _lock:
            overdue = [(key, raw) for key, (deadline, raw) in _watched.items() if deadline < now]
            for key, _raw in overdue:
                _watched.pop(key, None)
        for _key, raw in overdue:
            _cut(raw)


def _cut(raw: Connection[Any]) -> None:
    try:
        duplicate = socket.socket(fileno=os.dup(raw.pgconn.socket))
    except Exception:  # noqa: BLE001 - the connection is gone already
        return
    logger.warning("The database did not answer a statement in time: cutting its connection off")
    with contextlib.suppress(OSError):
        duplicate.shutdown(socket.SHUT_RDWR)
    duplicate.close()


def statement_timeout_apply(seconds: float) -> None:
    """Bound this process's statements: on the server (`statement_timeout`) and on the client
    (the watchdog, a margin later). Web servers and workers call it at start; management
    commands (migrations) run unbounded."""
    from django.db import connections  # noqa: PLC0415 - settings are loaded by now

    settings.DATABASE_STATEMENT_TIMEOUT_ACTIVE = seconds
    for alias in connections:
        options = connections.settings[alias].setdefault("OPTIONS", {})
        if connections.settings[alias]["ENGINE"].endswith("postgresql") and seconds:
            options["options"] = f"-c statement_timeout={int(seconds * 1000)}"
    connections.close_all()


def connection_watch(
    sender: type[BaseDatabaseWrapper], connection: BaseDatabaseWrapper, **kwargs: Any
) -> None:
    """`connection_created` receiver: watch every statement, commit and liveness ping of a
    PostgreSQL connection of a process with a statement timeout."""
    seconds = getattr(settings, "DATABASE_STATEMENT_TIMEOUT_ACTIVE", 0)
    if connection.vendor != "postgresql" or not seconds or getattr(connection, _WATCHED, False):
        return
    setattr(connection, _WATCHED, True)
    limit = seconds + settings.DATABASE_CLIENT_MARGIN_SECONDS

    def watched(
        execute: Callable[..., R], sql: str, params: Any, many: bool, context: dict[str, Any]
    ) -> R:
        with wait_limited(context["connection"].connection, limit):
            return execute(sql, params, many, context)

    connection.execute_wrappers.append(watched)
    for name in ("_commit", "_rollback", "is_usable"):
        setattr(connection, name, _limited(connection, getattr(type(connection), name), limit))


def _limited(
    connection: BaseDatabaseWrapper, method: Callable[..., R], limit: float
) -> Callable[..., R]:
    def call(*args: Any, **kwargs: Any) -> R:
        raw = connection.connection
        if raw is None:
            return method(connection, *args, **kwargs)
        with wait_limited(raw, limit):
            return method(connection, *args, **kwargs)

    return call
