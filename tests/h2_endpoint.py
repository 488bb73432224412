"""A local OpenAI-compatible endpoint that speaks only HTTP/2 over TLS (ALPN "h2"), built on
the `h2` protocol library, answering every pipeline prompt with `fake_openai.pipeline_reply`.

It records, per TCP connection, the protocol negotiated and the streams (requests) served, so a
test can see that the engine's client chose HTTP/2 and multiplexed requests over few
connections. The certificate is self-signed for 127.0.0.1 (made with the `openssl` command).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import h2.config
import h2.connection
import h2.events

from tests.fake_openai import Behaviour, RecordedRequest, completion_document, pipeline_reply


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, valid for a day."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(  # noqa: S603 - fixed arguments
        [  # noqa: S607 - the system's openssl
            "openssl",
            *("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@dataclass
class H2Endpoint:
    cert: Path
    key: Path
    delay: float = 0.0  # seconds before each reply, so that requests overlap
    # Per TCP connection: the ALPN protocol, streams served, most streams open at once.
    connections: list[dict] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        return sum(c["streams"] for c in self.connections)

    def start(self) -> H2Endpoint:
        started = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self.cert, self.key)
            context.set_alpn_protocols(["h2"])
            server = self._loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", 0, ssl=context)
            )
            self.port = server.sockets[0].getsockname()[1]
            started.set()
            self._loop.run_forever()
            server.close()
            self._loop.run_until_complete(server.wait_closed())

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            # Keep-alive connections of the clients are still open: end their tasks first.
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(10)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        ssl_object = writer.get_extra_info("ssl_object")
        record = {"protocol": ssl_object.selected_alpn_protocol() or "", "streams": 0, "peak": 0}
        self.connections.append(record)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        bodies: dict[int, bytearray] = {}
        headers: dict[int, dict[str, str]] = {}
        replies: set[asyncio.Task] = set()

        async def reply(stream_id: int, request_headers: dict[str, str], body: bytes) -> None:
            await asyncio.sleep(self.delay)
            self._reply(conn, stream_id, request_headers, body)
            writer.write(conn.data_to_send())
            await writer.drain()

        try:
            while data := await reader.read(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        bodies[event.stream_id] = bytearray()
                        headers[event.stream_id] = {_text(k): _text(v) for k, v in event.headers}
                        record["peak"] = max(record["peak"], len(bodies))
                    elif isinstance(event, h2.events.DataReceived):
                        bodies[event.stream_id] += event.data
                        conn.acknowledge_received_data(
                            event.flow_controlled_length, event.stream_id
                        )
                    elif isinstance(event, h2.events.StreamEnded):
                        record["streams"] += 1
                        task = asyncio.ensure_future(
                            reply(
                                event.stream_id,
                                headers.pop(event.stream_id),
                                bytes(bodies[event.stream_id]),
                            )
                        )
                        replies.add(task)
                        task.add_done_callback(replies.discard)
                        task.add_done_callback(
                            lambda _t, sid=event.stream_id: bodies.pop(sid, None)
                        )
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                writer.write(conn.data_to_send())
                await writer.drain()
        finally:
            writer.close()

    @staticmethod
    def _reply(conn, stream_id: int, headers: dict[str, str], body: bytes) -> None:
        request = RecordedRequest(
            path=headers.get(":path", ""), headers=headers, body=json.loads(body)
        )
        produced = pipeline_reply(request)
        behaviour = (
            Behaviour(content=produced) if isinstance(produced, str) else Behaviour(json=produced)
        )
        document = json.dumps(completion_document(request, behaviour)).encode()
        conn.send_headers(
            stream_id,
            [
                (":status", "200"),
                ("content-type", "application/json"),
                ("content-length", str(len(document))),
            ],
        )
        conn.send_data(stream_id, document, end_stream=True)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
