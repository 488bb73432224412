"""Ports for the servers tests start (Redis, the demo, fake endpoints, proxies)."""

import contextlib
import random
import socket
from pathlib import Path


def _ephemeral_range() -> tuple[int, int]:
    """The range the kernel draws outgoing connections' local ports from."""
    with contextlib.suppress(OSError, ValueError):
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    return 32768, 60999


def free_port() -> int:
    """A port no one listens on now: each test module's Redis gets its own, so two modules that
    run at once on two test processes never share (and stop) one server.

    Drawn below the kernel's ephemeral range: a module picks its port when it is collected and
    may start its server half an hour later, and a port in that range may by then be the local
    end of some outgoing connection (the server cannot bind it), or a probe may connect to
    itself on it and take a port no server listens on for a started one."""
    low, _high = _ephemeral_range()
    draw = random.Random()  # noqa: S311 - choosing a test port, not a secret
    for _ in range(200):
        port = draw.randrange(10_000, max(low, 10_001))
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port below the ephemeral range")
