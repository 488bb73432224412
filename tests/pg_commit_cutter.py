"""A PostgreSQL wire-protocol proxy for fault tests: it cuts chosen commits off mid-flight.

It forwards everything between its clients and the server, reading the client's messages as
they pass. A COMMIT closing a transaction that inserted into the call log is, every `every`-th
time, cut off in one of two ways, alternately:

- after: the COMMIT reaches the server, which applies it and answers; the answer is dropped with
  the connection, so the client only sees its connection lost (an acknowledgement lost on the
  network: the case a retry must not store twice);
- before: the connection drops with the COMMIT unsent, so the server rolls the transaction back
  (the case a retry must not lose).

Clients must not ask for TLS (`sslmode=disable`): the proxy reads the plain protocol.
"""

import contextlib
import socket
import struct
import threading

from tests.tcp_proxy import TcpProxy, close_both

SPECIAL_REQUESTS = {80877103, 80877104}  # SSLRequest, GSSENCRequest: answered by one byte
CALL_LOG_INSERT = b'INSERT INTO "llm_llmcall"'


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _statement(kind: bytes, body: bytes) -> bytes | None:
    """The SQL text of a simple query ('Q') or a prepared statement's Parse ('P')."""
    if kind == b"Q":
        return body.split(b"\x00", 1)[0]
    if kind == b"P":
        parts = body.split(b"\x00", 2)
        return parts[1] if len(parts) > 1 else None
    return None


class CommitCutter(TcpProxy):
    def __init__(self, upstream: tuple[str, int], *, every: int = 2, limit: int = 4) -> None:
        super().__init__(upstream)
        self.every = every
        self.limit = limit
        self.cut_after = 0  # commits applied whose answer was dropped
        self.cut_before = 0  # commits dropped unsent
        self._seen = 0

    def _decide(self) -> str | None:
        """Whether this call-log commit is cut, and how (alternately after, then before)."""
        with self._lock:
            self._seen += 1
            if self.cut_after + self.cut_before >= self.limit or self._seen % self.every:
                return None
            if self.cut_after <= self.cut_before:
                self.cut_after += 1
                return "after"
            self.cut_before += 1
            return "before"

    def serve(self, client: socket.socket, server: socket.socket) -> None:
        answered = threading.Event()  # set by the server-side pump when a cut is due
        state = {"cut_next_answer": False}

        def pump_answers() -> None:
            with contextlib.suppress(OSError):
                while data := server.recv(65536):
                    if state["cut_next_answer"]:
                        # The server answered the COMMIT: it applied. The answer goes nowhere.
                        answered.set()
                        break
                    client.sendall(data)
            close_both(client, server)

        threading.Thread(target=pump_answers, daemon=True).start()
        with contextlib.suppress(OSError, ConnectionError):
            # Startup: untyped messages until the StartupMessage itself.
            while True:
                head = _recv_exact(client, 8)
                length, code = struct.unpack("!ii", head)
                server.sendall(head + _recv_exact(client, length - 8))
                if code not in SPECIAL_REQUESTS:
                    break
            writes_calls = False
            while True:
                head = _recv_exact(client, 5)
                kind, length = head[:1], struct.unpack("!i", head[1:])[0]
                body = _recv_exact(client, length - 4)
                sql = _statement(kind, body) or b""
                if sql.startswith(CALL_LOG_INSERT):
                    writes_calls = True
                how = None
                if sql in (b"COMMIT", b"ROLLBACK"):
                    how = self._decide() if sql == b"COMMIT" and writes_calls else None
                    writes_calls = False
                if how == "before":
                    break
                if how == "after":
                    state["cut_next_answer"] = True
                server.sendall(head + body)
                if how == "after" and kind == b"Q":
                    answered.wait(timeout=30)
                    break
        close_both(client, server)
