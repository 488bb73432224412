"""Security tests reuse the registry's small catalog; the model egress tests share a resolver."""

import socket

import pytest

from tests.metrics_registry.conftest import catalog  # noqa: F401


@pytest.fixture
def dns(monkeypatch):
    """Made-up names answer what a test sets (in turn, the last answer repeating); every other
    name resolves as usual. `asked` lists each lookup of a made-up name."""
    real = socket.getaddrinfo
    answers: dict[str, list[str]] = {
        "metadata-alias.test": ["169.254.169.254"],
        "intranet-alias.test": ["10.1.2.3"],
    }
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in answers:
            return real(host, port, *args, **kwargs)
        asked.append(name)
        queue = answers[name]
        address = queue.pop(0) if len(queue) > 1 else queue[0]
        port = int(port or 0)
        if ":" in address:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    getaddrinfo.answers = answers
    getaddrinfo.asked = asked
    return getaddrinfo


@pytest.fixture
def private_refused(settings):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
