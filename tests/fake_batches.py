"""The providers' batch APIs on the local fakes (tests/fake_openai.py, tests/fake_anthropic.py).

OpenAI (`FakeOpenAIServer.batches`): POST /v1/files (multipart, purpose "batch", a JSONL file
of `{custom_id, method, url, body}` lines), POST /v1/batches, GET /v1/batches[/{id}] and
GET /v1/files/{id}/content (the output file: `{id, custom_id, response: {status_code,
request_id, body}, error}` per line; failed lines in the error file). Anthropic
(`FakeAnthropicServer.batches`): POST /v1/messages/batches (`{requests: [{custom_id,
params}]}`), GET /v1/messages/batches[/{id}] and the batch's `results_url` (JSONL of
`{custom_id, result: {type: succeeded|errored|expired, …}}`).

Checked as the services check them: the key; for OpenAI a file of purpose "batch", every line
with a unique custom_id, method POST, the batch's endpoint as url, a body naming one model for
the whole file, at most 50,000 lines and 200 MB, a 24h window; for Anthropic custom ids of
1–64 letters, digits, "_" or "-", unique, at most 100,000 requests, each request's params
checked as POST /v1/messages checks them (a request that fails them is errored in the results,
as the real service reports it).

A batch stays in progress while `hold` is set; `end()` answers every request of every open
batch through the server's usual path (queued behaviours, then its responder: each is recorded
in `server.requests` with `batch` set) and ends it, `end(expire=True)` ends them unanswered.
With `hold` unset a batch ends when it is first retrieved. `bill` lists (model, input tokens,
output tokens, cache reads, cache writes) of every answered request: what the provider charges
at its batch price (the server's own `bill` holds the requests it answered directly).
"""

import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import default as default_policy
from typing import Any

OPENAI_ENDPOINT = "/v1/chat/completions"
OPENAI_MAX_LINES = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")

Routed = tuple[int, Any, str] | None  # (status, document, content type)


class _Batches:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.lock = threading.Lock()
        self.hold = False
        self.batches: dict[str, dict] = {}
        self.bill: list[tuple[str, int, int, int, int]] = []
        self.problems: list[str] = []  # every request the fake refused, and why
        self.submitted = 0  # batch creations accepted

    def reset(self) -> None:
        with self.lock:
            self.hold = False
            self.batches.clear()
            self.bill.clear()
            self.problems.clear()
            self.submitted = 0

    def refuse(self, status: int, message: str) -> tuple[int, Any, str]:
        self.problems.append(message)
        return status, self.error(status, message), "application/json"

    def error(self, status: int, message: str) -> Any:
        raise NotImplementedError

    def answer(self, batch_id: str, custom_id: str, body: dict, headers: dict) -> dict:
        """One request answered through the server's usual path, recorded as batched."""
        server = self.server
        request = server.request_class(path=f"batch:{batch_id}", headers=headers, body=body)
        request.batch = custom_id
        problem = server._invalid(request)
        if problem is not None:
            with server._lock:
                server.requests.append(request)
            return {"status": problem[0], "document": problem[1]}
        behaviour = server._next(request)
        document = server._document(request, behaviour)
        return {"status": behaviour.status, "document": document}


def _now() -> int:
    return int(time.time())


class OpenAIBatches(_Batches):
    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.files: dict[str, dict] = {}

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.files.clear()

    def error(self, status: int, message: str) -> Any:
        return {"error": {"message": message, "type": "invalid_request_error", "code": None}}

    def route(self, method: str, path: str, headers: dict, raw: bytes) -> Routed:
        path = path.split("?")[0].rstrip("/")
        if not (path.startswith("/v1/files") or path.startswith("/v1/batches")):
            return None
        if not headers.get("authorization", "").startswith("Bearer "):
            return self.refuse(401, "You didn't provide an API key.")
        if method == "POST" and path == "/v1/files":
            return self._upload(headers, raw)
        if method == "POST" and path == "/v1/batches":
            return self._create(json.loads(raw or b"{}"), headers)
        if method == "GET" and path == "/v1/batches":
            with self.lock:
                data = [self._public(b) for b in reversed(self.batches.values())]
            return 200, {"object": "list", "data": data, "has_more": False}, "application/json"
        found = re.fullmatch(r"/v1/batches/([\w-]+)", path)
        if method == "GET" and found:
            return self._retrieve(found.group(1))
        found = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
        if method == "GET" and found:
            with self.lock:
                file = self.files.get(found.group(1))
            if file is None:
                return self.refuse(404, "No such File object")
            return 200, file["content"].decode("utf-8"), "application/octet-stream"
        return self.refuse(404, f"Unknown route {method} {path}")

    def _upload(self, headers: dict, raw: bytes) -> tuple[int, Any, str]:
        kind = headers.get("content-type", "")
        if not kind.startswith("multipart/form-data"):
            return self.refuse(400, "Files are uploaded as multipart/form-data.")
        message = BytesParser(policy=default_policy).parsebytes(
            f"Content-Type: {kind}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if fields.get("purpose", (None, b""))[1] != b"batch":
            return self.refuse(400, "purpose: this fake takes files of purpose 'batch'.")
        if "file" not in fields:
            return self.refuse(400, "file: Field required")
        filename, content = fields["file"]
        if len(content) > OPENAI_MAX_BYTES:
            return self.refuse(400, "The file is larger than 200 MB.")
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        document = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": _now(),
            "filename": filename or "upload.jsonl",
            "purpose": "batch",
            "status": "processed",
        }
        with self.lock:
            self.files[file_id] = {**document, "content": content}
        return 200, document, "application/json"

    def _lines(self, content: bytes, endpoint: str) -> tuple[list[dict], str]:
        """The file's requests, or why the batch fails validation."""
        lines, seen, models = [], set(), set()
        for number, raw in enumerate(content.decode("utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                return [], f"line {number}: not valid JSON"
            custom_id = line.get("custom_id")
            if not isinstance(custom_id, str) or not custom_id:
                return [], f"line {number}: custom_id is required"
            if custom_id in seen:
                return [], f"line {number}: custom_id {custom_id!r} is not unique"
            seen.add(custom_id)
            if line.get("method") != "POST":
                return [], f"line {number}: method must be POST"
            if line.get("url") != endpoint:
                return [], f"line {number}: url must be the batch's endpoint {endpoint}"
            body = line.get("body")
            if not isinstance(body, dict) or not body.get("model") or not body.get("messages"):
                return [], f"line {number}: body needs a model and messages"
            models.add(body["model"])
            lines.append(line)
        if not lines:
            return [], "the file holds no request"
        if len(lines) > OPENAI_MAX_LINES:
            return [], f"more than {OPENAI_MAX_LINES} requests"
        if len(models) > 1:
            return [], "every request of a batch must name the same model"
        return lines, ""

    def _create(self, body: dict, headers: dict) -> tuple[int, Any, str]:
        unknown = set(body) - {"input_file_id", "endpoint", "completion_window", "metadata"}
        if unknown:
            return self.refuse(400, f"Unrecognized request argument: {sorted(unknown)[0]}")
        if body.get("endpoint") != OPENAI_ENDPOINT:
            return self.refuse(400, "endpoint: this fake serves /v1/chat/completions")
        if body.get("completion_window") != "24h":
            return self.refuse(400, "completion_window: only '24h' is supported")
        with self.lock:
            file = self.files.get(body.get("input_file_id") or "")
        if file is None or file["purpose"] != "batch":
            return self.refuse(400, "input_file_id: no file of purpose 'batch' with this id")
        lines, problem = self._lines(file["content"], OPENAI_ENDPOINT)
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": OPENAI_ENDPOINT,
            "input_file_id": file["id"],
            "completion_window": "24h",
            "status": "failed" if problem else "in_progress",
            "created_at": _now(),
            "metadata": body.get("metadata"),
            "errors": {"object": "list", "data": [{"code": "invalid", "message": problem}]}
            if problem
            else None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "lines": lines,
            "headers": headers,
        }
        if problem:
            self.problems.append(problem)
        with self.lock:
            self.batches[batch_id] = batch
            self.submitted += 1
        return 200, self._public(batch), "application/json"

    def _retrieve(self, batch_id: str) -> tuple[int, Any, str]:
        with self.lock:
            batch = self.batches.get(batch_id)
            ends = batch is not None and not self.hold and batch["status"] == "in_progress"
        if batch is None:
            return self.refuse(404, "No batch found with this id")
        if ends:
            self._end(batch, expire=False)
        return 200, self._public(batch), "application/json"

    def end(self, *, expire: bool = False) -> None:
        with self.lock:
            open_batches = [b for b in self.batches.values() if b["status"] == "in_progress"]
        for batch in open_batches:
            self._end(batch, expire=expire)

    def _end(self, batch: dict, *, expire: bool) -> None:
        output, errors = [], []
        for line in batch["lines"]:
            entry = {"id": f"batch_req_{uuid.uuid4().hex[:20]}", "custom_id": line["custom_id"]}
            if expire:
                entry.update(
                    response=None,
                    error={"code": "batch_expired", "message": "This request could not be "
                           "executed before the completion window expired."},
                )  # fmt: skip
                errors.append(entry)
                continue
            answered = self.answer(batch["id"], line["custom_id"], line["body"], batch["headers"])
            entry["response"] = {
                "status_code": answered["status"],
                "request_id": uuid.uuid4().hex,
                "body": answered["document"],
            }
            entry["error"] = None
            if answered["status"] == 200:
                bill = self.server.bill_of(line["body"]["model"], answered["document"]["usage"])
                with self.lock:
                    self.bill.append(bill)
                output.append(entry)
            else:
                errors.append(entry)
        counts = {"total": len(batch["lines"]), "completed": len(output), "failed": len(errors)}
        with self.lock:
            for name, entries in (("output_file_id", output), ("error_file_id", errors)):
                if entries:
                    file_id = f"file-{uuid.uuid4().hex[:24]}"
                    content = "".join(json.dumps(e) + "\n" for e in entries).encode("utf-8")
                    self.files[file_id] = {"id": file_id, "purpose": "batch_output",
                                           "content": content}  # fmt: skip
                    batch[name] = file_id
            batch["request_counts"] = counts
            batch["status"] = "expired" if expire else "completed"

    def _public(self, batch: dict) -> dict:
        return {k: v for k, v in batch.items() if k not in ("lines", "headers")}


class AnthropicBatches(_Batches):
    def error(self, status: int, message: str) -> Any:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}

    def route(self, method: str, path: str, headers: dict, raw: bytes) -> Routed:
        path = path.split("?")[0].rstrip("/")
        if not path.startswith("/v1/messages/batches"):
            return None
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if not key or (self.server.api_key and key != self.server.api_key):
            return self.refuse(401, "invalid x-api-key")
        if method == "POST" and path == "/v1/messages/batches":
            return self._create(json.loads(raw or b"{}"), headers)
        if method == "GET" and path == "/v1/messages/batches":
            with self.lock:
                data = [self._public(b) for b in reversed(self.batches.values())]
            return (
                200,
                {"data": data, "has_more": False, "first_id": None, "last_id": None},
                ("application/json"),
            )
        found = re.fullmatch(r"/v1/messages/batches/([\w-]+)(/results)?", path)
        if method == "GET" and found:
            with self.lock:
                batch = self.batches.get(found.group(1))
                ends = batch is not None and not self.hold and batch["status"] == "in_progress"
            if batch is None:
                return self.refuse(404, "No batch with this id")
            if found.group(2):
                if batch["status"] != "ended":
                    return self.refuse(400, "The batch has not ended: no results yet")
                lines = "".join(json.dumps(r) + "\n" for r in batch["results"])
                return 200, lines, "application/binary"
            if ends:
                self._end(batch, expire=False)
            return 200, self._public(batch), "application/json"
        return self.refuse(404, f"Unknown route {method} {path}")

    def _create(self, body: dict, headers: dict) -> tuple[int, Any, str]:
        requests = body.get("requests")
        if set(body) - {"requests"}:
            return self.refuse(400, f"{sorted(set(body) - {'requests'})[0]}: Extra inputs")
        if not isinstance(requests, list) or not requests:
            return self.refuse(400, "requests: at least one request is required")
        if len(requests) > ANTHROPIC_MAX_REQUESTS:
            return self.refuse(400, f"requests: at most {ANTHROPIC_MAX_REQUESTS}")
        seen = set()
        for index, request in enumerate(requests):
            custom_id = request.get("custom_id")
            if not isinstance(custom_id, str) or not ANTHROPIC_CUSTOM_ID.fullmatch(custom_id):
                return self.refuse(400, f"requests.{index}.custom_id: 1-64 of [a-zA-Z0-9_-]")
            if custom_id in seen:
                return self.refuse(400, f"requests.{index}.custom_id: must be unique")
            seen.add(custom_id)
            if set(request) != {"custom_id", "params"} or not isinstance(request["params"], dict):
                return self.refuse(400, f"requests.{index}: custom_id and params are required")
        batch_id = f"msgbatch_{uuid.uuid4().hex[:24]}"
        created = datetime.now(tz=UTC)
        batch = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "status": "in_progress",
            "request_counts": {
                "processing": len(requests),
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },  # fmt: skip
            "created_at": created.isoformat().replace("+00:00", "Z"),
            "expires_at": created.replace(day=created.day).isoformat().replace("+00:00", "Z"),
            "ended_at": None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
            "requests": requests,
            "headers": headers,
            "results": [],
        }
        with self.lock:
            self.batches[batch_id] = batch
            self.submitted += 1
        return 200, self._public(batch), "application/json"

    def end(self, *, expire: bool = False) -> None:
        with self.lock:
            open_batches = [b for b in self.batches.values() if b["status"] == "in_progress"]
        for batch in open_batches:
            self._end(batch, expire=expire)

    def _end(self, batch: dict, *, expire: bool) -> None:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        results = []
        for request in batch["requests"]:
            custom_id = request["custom_id"]
            if expire:
                results.append({"custom_id": custom_id, "result": {"type": "expired"}})
                counts["expired"] += 1
                continue
            answered = self.answer(batch["id"], custom_id, request["params"], batch["headers"])
            document = answered["document"]
            if answered["status"] == 200:
                bill = self.server.bill_of(request["params"]["model"], document["usage"])
                with self.lock:
                    self.bill.append(bill)
                results.append(
                    {"custom_id": custom_id, "result": {"type": "succeeded", "message": document}}
                )
                counts["succeeded"] += 1
            else:
                results.append(
                    {"custom_id": custom_id, "result": {"type": "errored", "error": document}}
                )
                counts["errored"] += 1
        base = self.server.base_url
        with self.lock:
            batch["results"] = results
            batch["request_counts"] = counts
            batch["status"] = batch["processing_status"] = "ended"
            batch["ended_at"] = datetime.now(tz=UTC).isoformat().replace("+00:00", "Z")
            batch["results_url"] = f"{base}/v1/messages/batches/{batch['id']}/results"

    def _public(self, batch: dict) -> dict:
        return {
            k: v for k, v in batch.items() if k not in ("requests", "headers", "results", "status")
        }
