"""A local OpenAI-compatible server for tests: real HTTP on 127.0.0.1, scripted replies.

    fake_openai.enqueue(status=429, headers={"Retry-After": "0"})
    fake_openai.enqueue(content="not json")
    fake_openai.enqueue(json={"present": True})
    fake_openai.enqueue(delay=1.0)               # slower than the client timeout
    fake_openai.enqueue(close_connection=True)   # drop the socket without answering
    fake_openai.enqueue(content='{"pres', finish_reason="length")  # cut off at max_tokens
    fake_openai.enqueue(malformed="no_choices")  # a 200 that is not a usable reply: no_choices,
                                                 # null_content, empty_content, not_json
    fake_openai.responder = lambda request: "reply"  # for every unscripted request
    fake_openai.latency = 0.05                    # added to every request
    fake_openai.input_tokens_per_minute = 200     # enforce an input TPM (429 past it); the
                                                 # Anthropic fake also announces what is left
    fake_openai.window_seconds = 60.0             # of that limit (shorter in tests)

A request with `store: true` has its completion kept with its `metadata` (checked against the
real service's limits), and `GET /v1/chat/completions?metadata[k]=v&model=…` lists those kept
(tests/stored_completions.py); `fake_openai.list_down = True` answers those lookups 503.

A reply whose rate-limit headers (scripted or announced) say 0 remain is a promise the fake
holds the client to: a request arriving before that header's reset is refused with 429.

Queued behaviours are consumed one per request in arrival order; with the queue empty the
server answers with `responder` (or a fixed text). Every request is recorded in `requests`.
Each connection gets its own thread, and HTTP/1.1 keep-alive lets clients reuse connections,
so dozens of concurrent clients are served at once.
"""

import contextlib
import json
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_batches import OpenAIBatches
from tests.fake_ratelimits import RateLimitedFake
from tests.stored_completions import StoredCompletions, metadata_problem

DEFAULT_CONTENT = "Hello from the local test model."
MALFORMED_SHAPES = ("no_choices", "null_content", "empty_content", "not_json")
NOT_JSON_BODY = "<html><body>502 Bad Gateway (proxy)</body></html>"


@dataclass
class Behaviour:
    status: int = 200
    content: str | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    close_connection: bool = False
    body: Any = None  # a raw JSON body, replacing the chat.completion document
    malformed: str = ""  # one of MALFORMED_SHAPES: a broken 200 as some servers send
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"  # "length": the reply stopped at max_tokens
    responder: Callable[["RecordedRequest"], Any] | None = None


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict
    batch: str = ""  # the custom_id of a request answered in a batch (tests/fake_batches.py)
    raw: bytes = b""  # the body as it arrived, byte for byte

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def model(self) -> str:
        return self.body.get("model", "")

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")

    def param(self, name: str, default: Any = None) -> Any:
        return self.body.get(name, default)


def _count_tokens(text: str) -> int:
    return max(1, len(text.split()))


def behaviour_resolve(request: RecordedRequest, behaviour: Behaviour) -> Behaviour:
    """Apply the behaviour's responder, if any: it returns text, a JSON value or a Behaviour."""
    responder = behaviour.responder
    if responder is not None and behaviour.content is None and behaviour.json is None:
        produced = responder(request)
        if isinstance(produced, Behaviour):
            return produced
        if isinstance(produced, str):
            behaviour.content = produced
        else:
            behaviour.json = produced
    return behaviour


def pipeline_reply(request: RecordedRequest) -> Any:
    """A valid answer to each kind of prompt the evaluation pipeline sends, told apart by the
    prompt text (simulator, target and judge may share one configuration and model name)."""
    system = str(request.messages[0].get("content") or "") if request.messages else ""
    last = str(request.messages[-1].get("content") or "") if request.messages else ""
    if "role-playing a person" in system:
        return {
            "message": "ok, but what would you do in my place?",
            "stop": False,
            "stop_reason": "",
        }
    if "<user_turns>" in last:
        count = last.split("</anchors>")[0].count("\n[")
        return {
            "anchors": [
                {"anchor": n, "raised": False, "turn": None, "quote": ""}
                for n in range(1, max(1, count) + 1)
            ]
        }
    if "<fidelity_transcript>" in last:
        return fidelity_reply()
    if "You are the judge" in system:
        return judge_reply(str(request.messages[1].get("content") or ""))
    if "You are a grader" in system:
        return rubric_grader_reply(system, last)
    return "Here is a considered reply with a few options to think about."


_ASSISTANT_LINE = re.compile(r"^\[Turn (\d+)\] Assistant: (.+)$", re.MULTILINE)


def judge_reply(prompt: str) -> Any:
    """A present verdict quoting the first assistant turn, as the judge's schema asks."""
    turn = _ASSISTANT_LINE.search(prompt)
    evidence = (
        [{"turn": int(turn.group(1)), "quote": turn.group(2).strip(), "shows": "behaviour_shown"}]
        if turn
        else []
    )
    return {"present": True, "justification": "It does.", "evidence": evidence}


CHECK_FENCES = ("<user_turns>", "<fidelity_transcript>")


def is_check(request: RecordedRequest) -> bool:
    """Whether a judge-family request is a check of the simulation (the anchor or the fidelity
    check), not a verdict."""
    last = str(request.messages[-1].get("content") or "") if request.messages else ""
    return any(fence in last for fence in CHECK_FENCES)


def fidelity_reply(held: bool = True) -> Any:
    """The fidelity checker's answer: every criterion held (or none), each with a reason."""
    criteria = ("persona", "goal", "fresh", "in_character", "responsive")
    return {
        "criteria": [
            {"criterion": c, "held": held, "turn": None, "quote": "", "reason": "As read."}
            for c in criteria
        ]
    }


def rubric_grader_reply(system: str, prompt: str) -> Any:
    """The rubric grader's answer: one criterion graded (HealthBench's way), or every numbered
    criterion of the prompt at once (the all-in-one option), each met and quoting the reply."""
    reply = re.search(r"<reply>\n(.*?)\n</reply>", prompt, re.DOTALL)
    quote = reply.group(1).strip() if reply else ""
    if "numbered rubric" not in system:
        return {"explanation": "The reply does this.", "criteria_met": True, "quote": quote}
    criteria = prompt.rsplit("<criteria>", 1)[-1].count("\n[")
    return {
        "grades": [
            {"criterion": n, "met": True, "justification": "It does.", "quote": quote}
            for n in range(1, criteria + 1)
        ]
    }


def completion_document(request: RecordedRequest, behaviour: Behaviour) -> Any:
    """The response body for `request` as `behaviour` scripts it (a chat.completion by default)."""
    if behaviour.body is not None:
        return behaviour.body
    if behaviour.malformed:
        return _malformed(request, behaviour)
    if behaviour.status >= 400:
        return {"error": {"message": f"scripted HTTP {behaviour.status}", "type": "test"}}
    if behaviour.json is not None:
        content = json.dumps(behaviour.json)
    else:
        content = behaviour.content if behaviour.content is not None else DEFAULT_CONTENT
    prompt_text = " ".join(str(m.get("content") or "") for m in request.messages)
    prompt_tokens = behaviour.prompt_tokens
    completion_tokens = behaviour.completion_tokens
    prompt_tokens = _count_tokens(prompt_text) if prompt_tokens is None else prompt_tokens
    if completion_tokens is None:
        completion_tokens = _count_tokens(content)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": behaviour.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _malformed(request: RecordedRequest, behaviour: Behaviour) -> Any:
    shape = behaviour.malformed
    if shape not in MALFORMED_SHAPES:
        raise ValueError(f"Unknown malformed shape {shape!r}; use one of {MALFORMED_SHAPES}.")
    if shape == "not_json":
        return NOT_JSON_BODY  # sent as is, with a JSON content type
    document = completion_document(request, Behaviour(content="placeholder"))
    if shape == "no_choices":
        del document["choices"]
    else:
        content = None if shape == "null_content" else ""
        document["choices"][0]["message"]["content"] = content
    return document


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in benchmarks; the default backlog of 5 would refuse some.
    request_queue_size = 1024


class FakeOpenAIServer(RateLimitedFake):
    # Subclasses speaking another API (tests/fake_anthropic.py) set these and `_document`.
    PATH = "/v1/chat/completions"
    API_PREFIX = "/v1"
    request_class = RecordedRequest
    batches_class: Any = OpenAIBatches
    # Chat completions sent with `store: true` are kept and listed (OpenAI's protocol only).
    KEEPS_COMPLETIONS = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stored = StoredCompletions()
        self.list_down = False  # the stored-completions lookup answers 503
        # The provider's batch API (tests/fake_batches.py).
        self.batches = self.batches_class(self)
        self._queue: deque[Behaviour] = deque()
        self.requests: list[RecordedRequest] = []
        # (start, end) of every answered request (time.monotonic), and the most requests
        # that were in progress at once: what concurrency-limit tests and the benchmark read.
        self.spans: list[tuple[float, float]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # The same per model (requests name their model), for limits set per configuration.
        self.in_flight_by_model: dict[str, int] = {}
        self.max_in_flight_by_model: dict[str, int] = {}
        self.latency = 0.0
        # Tokens of every reply written out whole: what a provider would bill; per request as
        # (model, input tokens, output tokens, cache reads, cache writes) in `bill`.
        self.billed_tokens = 0
        self.bill: list[tuple[str, int, int, int, int]] = []
        self.responder: Callable[[RecordedRequest], Any] | None = None
        # Rate limits like a provider's (see the module docstring).
        self.input_tokens_per_minute: int | None = None
        self.window_seconds = 60.0
        self.token_window: deque[tuple[float, int]] = deque()  # (arrival, input tokens)
        self.peak_window_tokens = 0
        self.refused: list[tuple[float, str]] = []  # (arrival, why) of every 429 of its own
        self.paused_until = 0.0  # what the last reply's headers promised (monotonic)
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        # A short poll interval keeps shutdown (one per test) from costing half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # --- control -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.API_PREFIX}"

    def start(self) -> "FakeOpenAIServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def enqueue(self, **behaviour: Any) -> None:
        with self._lock:
            self._queue.append(Behaviour(**behaviour))

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.spans.clear()
            self.max_in_flight = 0
            self.max_in_flight_by_model.clear()
            self.billed_tokens = 0
            self.bill.clear()
            self.token_window.clear()
            self.peak_window_tokens = 0
            self.refused.clear()
            self.paused_until = 0.0
        self.batches.reset()
        self.stored.reset()
        self.list_down = False
        self.latency = 0.0
        self.responder = None
        self.input_tokens_per_minute = None
        self.window_seconds = 60.0

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            return self.requests[-1]

    # --- serving -------------------------------------------------------------------------
    def _begin(self, model: str = "") -> float:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            now = self.in_flight_by_model.get(model, 0) + 1
            self.in_flight_by_model[model] = now
            self.max_in_flight_by_model[model] = max(self.max_in_flight_by_model.get(model, 0), now)
        return time.monotonic()

    def _end(self, started: float, model: str = "") -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_by_model[model] = self.in_flight_by_model.get(model, 1) - 1
            self.spans.append((started, time.monotonic()))

    def _next(self, request: RecordedRequest) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            behaviour = self._queue.popleft() if self._queue else None
        return behaviour_resolve(request, behaviour or Behaviour(responder=self.responder))

    def _document(self, request: RecordedRequest, behaviour: Behaviour) -> Any:
        return completion_document(request, behaviour)

    def bill_of(self, model: str, usage: dict) -> tuple[str, int, int, int, int]:
        """A bill line of a reply's usage: (model, input, output, cache reads, cache writes)."""
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        return (model, usage["prompt_tokens"], usage["completion_tokens"], cached, 0)

    def _serves(self, path: str) -> bool:
        return path == self.PATH

    def _invalid(self, request: RecordedRequest) -> tuple[int, Any] | None:
        """(status, body) when the request breaks the API's rules, else None."""
        return metadata_problem(request.body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _batches(self, method: str, raw: bytes) -> bool:
                """Serve a route of the batch API; False when the path is not one."""
                headers = {k.lower(): v for k, v in self.headers.items()}
                routed = server.batches.route(method, self.path, headers, raw)
                if routed is None:
                    return False
                status, document, content_type = routed
                self._send(status, document, {}, content_type=content_type)
                return True

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                path, _, query = self.path.partition("?")
                if server.KEEPS_COMPLETIONS and path.rstrip("/") == server.PATH:
                    if server.list_down:
                        down = {"error": {"message": "unavailable", "type": "server_error"}}
                        self._send(503, down, {})
                    else:
                        self._send(200, server.stored.listing(query), {})
                elif not self._batches("GET", b""):
                    self._send(404, {"error": {"message": "not found"}}, {})

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                if self._batches("POST", raw):
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                request = server.request_class(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    raw=raw,
                )
                if not server._serves(self.path.split("?")[0].rstrip("/")):
                    self._send(404, {"error": {"message": "not found"}}, {})
                    return
                if problem := server._invalid(request):
                    # Refused as the real service refuses a request it cannot read.
                    with server._lock:
                        server.requests.append(request)
                    self._send(problem[0], problem[1], {})
                    return
                started = server._begin(request.model)
                ended = False
                try:
                    behaviour = server._next(request)
                    wait = server.latency + behaviour.delay
                    if wait:
                        time.sleep(wait)
                    if behaviour.close_connection:
                        self.close_connection = True
                        with contextlib.suppress(OSError):
                            self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    document = server._document(request, behaviour)
                    status, document, headers = server._admit(request, document, behaviour.status)
                    headers = {**headers, **behaviour.headers}
                    pause = server._promised_pause(headers, time.time())
                    if status == 200 and pause > 0:
                        with server._lock:
                            server.paused_until = max(server.paused_until, time.monotonic() + pause)
                    # Finished before the reply is written: once written, the client may free
                    # its slot and send the next request before this thread runs again, which
                    # would count two requests where the client only ever had one.
                    server._end(started, request.model)
                    ended = True
                    if status == 200 and server.KEEPS_COMPLETIONS:
                        server.stored.keep(request.body, document)
                    self._send(status, document, headers)
                finally:
                    if not ended:
                        server._end(started, request.model)

            def _send(
                self,
                status: int,
                document: Any,
                headers: dict[str, str],
                content_type: str = "application/json",
            ) -> None:
                raw = document if isinstance(document, str) else json.dumps(document)
                payload = raw.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    usage = document.get("usage") if isinstance(document, dict) else None
                    if status == 200 and isinstance(usage, dict):
                        with server._lock:
                            server.billed_tokens += int(usage.get("total_tokens") or 0)
                            server.bill.append(server.bill_of(document.get("model", ""), usage))
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout test): nothing left to answer.
                    self.close_connection = True

        return Handler
