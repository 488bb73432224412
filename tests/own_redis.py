"""A redis-server of a test's own, without persistence (a restart loses everything), on a port
of its own: tests that stop and restart Redis never touch the shared one."""

import contextlib
import shutil
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A port no one listens on now: each test module's Redis gets its own, so two modules that
    run at once on two test processes never share (and stop) one server."""
    import socket  # only the tests that start a Redis need it

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
