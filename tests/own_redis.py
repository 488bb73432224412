"""A redis-server of a test's own, without persistence (a restart loses everything), on a port
of its own: tests that stop and restart Redis never touch the shared one."""

import contextlib
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.ports import free_port

__all__ = ["OwnRedis", "free_port"]


def _answers_ping(port: int) -> bool:
    """Whether a Redis server answers PING on the port (a TCP connect alone may reach no
    server: a socket connecting to its own port is one)."""
    with (
        contextlib.suppress(OSError),
        socket.create_connection(("127.0.0.1", port), 1) as connection,
    ):
        connection.sendall(b"PING\r\n")
        return connection.recv(16).startswith(b"+PONG")
    return False


class OwnRedis:
    def __init__(self, directory: Path, port: int) -> None:
        self.dir = directory
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - fixed argument list
            [
                str(shutil.which("redis-server")),
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"redis-server exited at once (exit {self.process.returncode}): "
                    f"is port {self.port} taken?"
                )
            if _answers_ping(self.port):
                return
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
