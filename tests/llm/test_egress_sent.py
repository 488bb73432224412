"""A connection's stream announces each request as it is written, and writes an HTTP/1.1 head
with its body, so "sent" is journaled exactly when the server can have the whole request."""

import asyncio

import httpcore2
import pytest

from llm import egress_http

pytestmark = pytest.mark.embedded

BODY = b'{"model": "m", "messages": []}'
HEAD = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n" % len(BODY)
)


class Recording(httpcore2.NetworkStream):
    def __init__(self, events: list) -> None:
        self.events = events

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.events.append(("write", bytes(buffer)))

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.events.append(("read", max_bytes))
        return b""

    def close(self) -> None:
        self.events.append(("close", None))


class AsyncRecording(httpcore2.AsyncNetworkStream):
    def __init__(self, events: list) -> None:
        self.events = events

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.events.append(("write", bytes(buffer)))

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.events.append(("read", max_bytes))
        return b""

    async def aclose(self) -> None:
        self.events.append(("close", None))


def _sync(writes: list[bytes], *, then: str = "") -> list:
    events: list = []
    stream = egress_http._Stream(Recording(events))
    with egress_http.on_sent(lambda: events.append(("sent", None))):
        for buffer in writes:
            stream.write(buffer)
        if then == "read":
            stream.read(10)
        elif then == "close":
            stream.close()
    return events


def _async(writes: list[bytes], *, then: str = "") -> list:
    events: list = []

    async def go() -> None:
        stream = egress_http._AsyncStream(AsyncRecording(events))
        with egress_http.on_sent(lambda: events.append(("sent", None))):
            for buffer in writes:
                await stream.write(buffer)
            if then == "read":
                await stream.read(10)
            elif then == "close":
                await stream.aclose()

    asyncio.run(go())
    return events


DRIVERS = pytest.mark.parametrize("drive", [_sync, _async], ids=["sync", "async"])


@DRIVERS
def test_a_head_waits_for_its_body_and_both_go_in_one_write_announced_just_before(drive):
    assert drive([HEAD]) == []  # a kill now: nothing sent, nothing journaled
    assert drive([HEAD, BODY, b""]) == [("sent", None), ("write", HEAD + BODY)]


@DRIVERS
def test_a_request_without_a_body_is_written_and_announced_at_once(drive):
    head = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    assert drive([head]) == [("sent", None), ("write", head)]
    empty = HEAD.replace(b"Content-Length: %d" % len(BODY), b"Content-Length: 0")
    assert drive([empty]) == [("sent", None), ("write", empty)]


@DRIVERS
def test_a_held_head_is_written_before_any_read_and_dropped_on_close(drive):
    assert drive([HEAD], then="read") == [("sent", None), ("write", HEAD), ("read", 10)]
    assert drive([HEAD], then="close") == [("close", None)]


@DRIVERS
def test_http2_frames_and_writes_outside_an_attempt_pass_through_unheld(drive):
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    assert drive([preface, b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"])[:2] == [
        ("sent", None),
        ("write", preface),
    ]
    events: list = []
    egress_http._Stream(Recording(events)).write(HEAD)  # no request waiting to be announced
    assert events == [("write", HEAD)]


def test_the_announcement_is_made_once_per_request():
    events: list = []
    stream = egress_http._Stream(Recording(events))
    with egress_http.on_sent(lambda: events.append(("sent", 1))):
        stream.write(HEAD)
        stream.write(BODY)
        stream.write(b"more")
    with egress_http.on_sent(lambda: events.append(("sent", 2))):
        stream.write(HEAD)
        stream.write(BODY)
    assert [e for e in events if e[0] == "sent"] == [("sent", 1), ("sent", 2)]
    assert [e[1] for e in events if e[0] == "write"] == [HEAD + BODY, b"more", HEAD + BODY]
