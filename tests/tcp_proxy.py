"""A TCP proxy for fault tests: forwards to a server until frozen, then answers nothing.

Frozen, it still accepts connections and takes whatever clients send (so their kernel sees it
acknowledged), but neither forwards it nor replies — a database host that hangs. Connections
opened before the freeze stop too. `thaw` forwards again (new connections only; the ones held
while frozen are closed).
"""

import contextlib
import socket
import threading


class TcpProxy:
    """Listens on a free local port; each client accepted gets its own connection to
    `upstream`, and `serve(client, server)` (a subclass's) runs on a thread of its own."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._lock = threading.Lock()
        self._closed = False

    @property
    def port(self) -> int:
        return self._listener.getsockname()[1]

    def start(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()

    def accepted(self, client: socket.socket) -> bool:
        """Whether to connect this client upstream (False: the subclass kept it)."""
        return True

    def serve(self, client: socket.socket, server: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self.accepted(client):
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            threading.Thread(target=self.serve, args=(client, server), daemon=True).start()


def close_both(*socks: socket.socket) -> None:
    for sock in socks:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()


class FreezableProxy(TcpProxy):
    def __init__(self, upstream: tuple[str, int]) -> None:
        super().__init__(upstream)
        self.frozen = threading.Event()
        self._held: list[socket.socket] = []

    def freeze(self) -> None:
        self.frozen.set()

    def thaw(self) -> None:
        self.frozen.clear()
        with self._lock:
            held, self._held = self._held, []
        for sock in held:
            with contextlib.suppress(OSError):
                sock.close()

    def close(self) -> None:
        super().close()
        self.thaw()

    def _hold(self, sock: socket.socket) -> None:
        with self._lock:
            self._held.append(sock)
        threading.Thread(target=self._swallow, args=(sock,), daemon=True).start()

    @staticmethod
    def _swallow(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while sock.recv(65536):
                pass

    def accepted(self, client: socket.socket) -> bool:
        if self.frozen.is_set():
            self._hold(client)
            return False
        return True

    def serve(self, client: socket.socket, server: socket.socket) -> None:
        threading.Thread(target=self._pump, args=(server, client), daemon=True).start()
        self._pump(client, server)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if self.frozen.is_set():
                    # Taken and dropped: the other side waits for an answer that never comes.
                    self._hold(source)
                    self._hold(sink)
                    return
                sink.sendall(data)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
