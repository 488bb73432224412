"""An OpenAI-compatible endpoint with a fixed latency, on asyncio, for benchmarks.

Hundreds of requests in flight cost one coroutine each (the thread-per-connection server in
tests/fake_openai.py would need a thread each). Every chat.completions request is answered
after `--latency` seconds with a valid reply for the pipeline's prompts (simulator, target,
judge, anchor check: `tests.fake_openai.pipeline_reply`), built by the same code as the test
server (`completion_document`). HTTP/1.1 with keep-alive.

    GET  /stats        {"requests", "in_flight", "max_in_flight", "first_start", "last_end",
                        "billed_tokens", "answered_tokens", "resets"}
    GET  /stats/bills  {"bills": [[time written, tokens, peer gone], ...] one per billed reply,
                        "prompts": {sha256 of the messages: requests}}
    POST /stats/reset  zero the counters
    GET  /v1/chat/completions?metadata[k]=v&model=…   the completions kept for requests sent
                       with `store: true` (tests/stored_completions.py): kept as soon as they
                       are answered, written to a dead connection or not, as the real service
                       bills and keeps them

`billed_tokens` is what a provider would bill: the usage tokens (prompt + completion) of every
reply once it has been written out whole (after `writer.drain()`), so a reply cut off by a
client that died mid-write is not counted. A reply whose client had already closed the
connection (its process killed) can still be written whole into the socket's buffer: its bill
says "peer gone" (the connection's end seen, or the transport closing, at that moment).
`answered_tokens` counts every reply the endpoint produced, delivered or not: what the real
service bills (it bills a completion its client never read, and keeps it when asked to).
`prompts` counts the requests received per prompt, hashed as the call log's `prompt_id`
(`llm.recording.prompt_text`), so a call log row can be matched with a request that arrived.

Times are `time.monotonic()` (system-wide on Linux, so comparable across processes).

    .venv/bin/python benchmarks/fake_endpoint.py --latency 0.05   # prints its base URL
"""

import argparse
import asyncio
import contextlib
import hashlib
import json
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fake_openai import (  # noqa: E402 - after the path is set
    Behaviour,
    RecordedRequest,
    behaviour_resolve,
    completion_document,
    pipeline_reply,
)
from tests.stored_completions import StoredCompletions, metadata_problem  # noqa: E402

COMPLETIONS = "/v1/chat/completions"


class Endpoint:
    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.stored = StoredCompletions()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.billed_tokens = 0
        self.answered_tokens = 0
        # Connections the client's side reset (RST) rather than closed: a reset discards what
        # the kernel had received and the endpoint not yet read, a request's bytes included.
        self.resets = 0
        self.bills: list[tuple[float, int, bool]] = []
        self.prompts: Counter[str] = Counter()
        self.stored.reset()

    def stats(self) -> dict:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "first_start": self.first_start,
            "last_end": self.last_end,
            "billed_tokens": self.billed_tokens,
            "answered_tokens": self.answered_tokens,
            "resets": self.resets,
        }

    async def complete(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if self.first_start is None:
            self.first_start = time.monotonic()
        try:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return 400, {"error": {"message": "body is not JSON", "type": "invalid_request"}}
            if problem := metadata_problem(body):
                return problem
            self.prompts[prompt_hash(body.get("messages") or [])] += 1
            request = RecordedRequest(path=COMPLETIONS, headers=headers, body=body)
            behaviour = behaviour_resolve(request, Behaviour(responder=pipeline_reply))
            await asyncio.sleep(self.latency)
            document = completion_document(request, behaviour)
            if behaviour.status == 200:
                # Kept once answered, before it is written: a reply to a dead client is kept too.
                self.answered_tokens += _usage_tokens(document)
                self.stored.keep(body, document)
            return behaviour.status, document
        finally:
            self.in_flight -= 1
            self.last_end = time.monotonic()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except ConnectionResetError:
                    self.resets += 1
                    return
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                path, _, query = path.partition("?")
                path = path.rstrip("/")
                if method == "POST" and path == COMPLETIONS:
                    status, document = await self.complete(headers, raw)
                elif method == "GET" and path == COMPLETIONS:
                    status, document = 200, self.stored.listing(query)
                elif method == "GET" and path == "/stats":
                    status, document = 200, self.stats()
                elif method == "GET" and path == "/stats/bills":
                    status, document = 200, {"bills": self.bills, "prompts": self.prompts}
                elif method == "POST" and path == "/stats/reset":
                    self.reset()
                    status, document = 200, self.stats()
                else:
                    status, document = 404, {"error": {"message": "not found", "type": "test"}}
                payload = json.dumps(document).encode()
                writer.write(
                    f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}\r\n"
                    "Content-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
                if method == "POST" and path == COMPLETIONS and status == 200:
                    # Billed once written whole, as a provider bills a reply it delivered.
                    tokens = _usage_tokens(document)
                    gone = reader.at_eof() or writer.transport.is_closing()
                    self.billed_tokens += tokens
                    self.bills.append((time.monotonic(), tokens, gone))
                if headers.get("connection", "").lower() == "close":
                    return
        except ConnectionResetError:
            self.resets += 1
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


def prompt_hash(messages: list) -> str:
    """As `llm.recording.prompt_text` hashes a call's messages (that module needs Django)."""
    encoded = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _usage_tokens(document: Any) -> int:
    usage = document.get("usage") if isinstance(document, dict) else None
    if not isinstance(usage, dict):
        return 0
    return int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)


async def _main(latency: float, port: int) -> None:
    endpoint = Endpoint(latency)
    server = await asyncio.start_server(endpoint.serve, "127.0.0.1", port, backlog=2048)
    bound = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{bound}/v1", flush=True)
    async with server:
        await server.serve_forever()


class EndpointProcess:
    """The endpoint in its own process, so its CPU is not the measured process's."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def start(self) -> "EndpointProcess":
        self.process = subprocess.Popen(  # noqa: S603 - fixed argument list
            [sys.executable, __file__, "--latency", str(self.latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self.stop()
            raise RuntimeError("The fake endpoint did not start.")
        return self

    def _call(self, method: str, path: str) -> dict:
        root = self.base_url.removesuffix("/v1")
        request = urllib.request.Request(f"{root}{path}", method=method, data=b"")  # noqa: S310
        if method == "GET":
            request.data = None
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - local
            return json.loads(response.read())

    def stats(self) -> dict:
        return self._call("GET", "/stats")

    def bills(self) -> tuple[list[tuple[float, int, bool]], dict[str, int]]:
        """The billed replies, and the requests received per prompt hash."""
        document = self._call("GET", "/stats/bills")
        return [tuple(bill) for bill in document["bills"]], document["prompts"]

    def reset(self) -> dict:
        return self._call("POST", "/stats/reset")

    def cpu_seconds(self) -> float:
        """User + system CPU the endpoint process has used so far."""
        import psutil

        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        if self.process and self.process.stdout:
            self.process.stdout.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.latency, args.port))
