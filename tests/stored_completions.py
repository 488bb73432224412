"""Stored chat completions as OpenAI keeps them, shared by the test server (tests/fake_openai.py)
and the benchmarks' endpoint (benchmarks/fake_endpoint.py).

A request with `store: true` has its completion kept, with the request's `metadata`, even when
the reply could not be delivered (the client gone): the real service bills and keeps those too.
`metadata` is checked as the real service checks it: an object of at most 16 string pairs,
keys of at most 64 characters and values of at most 512; otherwise HTTP 400 with OpenAI's error
shape. `GET /v1/chat/completions?metadata[k]=v&model=…` lists the kept completions whose
metadata holds every pair asked (and of that model), in OpenAI's list shape.
"""

import threading
from typing import Any
from urllib.parse import parse_qsl

MAX_PAIRS = 16
MAX_KEY = 64
MAX_VALUE = 512


def _error(message: str, param: str) -> tuple[int, dict]:
    return 400, {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": "invalid_value",
        }
    }


def metadata_problem(body: Any) -> tuple[int, dict] | None:
    """(400, OpenAI's error) when the request's `store` or `metadata` breaks the API's rules."""
    if not isinstance(body, dict):
        return None
    if "store" in body and not isinstance(body["store"], bool | None):
        return _error("Invalid type for 'store': expected a boolean.", "store")
    metadata = body.get("metadata")
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        return _error("Invalid type for 'metadata': expected an object.", "metadata")
    if len(metadata) > MAX_PAIRS:
        return _error(
            f"Invalid 'metadata': too many properties. Expected an object with at most "
            f"{MAX_PAIRS} properties, but got an object with {len(metadata)} properties instead.",
            "metadata",
        )
    for key, value in metadata.items():
        if len(key) > MAX_KEY:
            return _error(
                f"Invalid 'metadata': string too long. Expected a key with maximum length "
                f"{MAX_KEY}, but got a key with length {len(key)} instead.",
                "metadata",
            )
        if not isinstance(value, str):
            return _error(
                f"Invalid type for 'metadata.{key}': expected a string.", f"metadata.{key}"
            )
        if len(value) > MAX_VALUE:
            return _error(
                f"Invalid 'metadata.{key}': string too long. Expected a string with maximum "
                f"length {MAX_VALUE}, but got a string with length {len(value)} instead.",
                f"metadata.{key}",
            )
    return None


class StoredCompletions:
    """The completions kept for requests sent with `store: true`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.kept: list[tuple[dict[str, str], dict]] = []  # (metadata, completion)
        self.lists = 0  # list requests answered

    def reset(self) -> None:
        with self._lock:
            self.kept.clear()
            self.lists = 0

    def keep(self, body: Any, document: Any) -> None:
        """Keep `document` (a chat.completion) if its request asked for it."""
        if not (isinstance(body, dict) and body.get("store") is True):
            return
        if not (isinstance(document, dict) and document.get("object") == "chat.completion"):
            return
        with self._lock:
            self.kept.append((dict(body.get("metadata") or {}), document))

    def listing(self, query: str) -> dict:
        """The list answer for a `GET /v1/chat/completions` query string."""
        wanted: dict[str, str] = {}
        model = ""
        limit = 20
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name.startswith("metadata[") and name.endswith("]"):
                wanted[name[len("metadata[") : -1]] = value
            elif name == "model":
                model = value
            elif name == "limit":
                limit = int(value)
        with self._lock:
            self.lists += 1
            found = [
                document
                for metadata, document in self.kept
                if all(metadata.get(k) == v for k, v in wanted.items())
                and (not model or document.get("model") == model)
            ]
        page = found[:limit]
        return {
            "object": "list",
            "data": page,
            "has_more": len(found) > limit,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
        }
