"""What a provider is: the one small interface every model provider implements.

A provider turns the platform's request (OpenAI-shaped messages and parameters, the same for
every provider, so the call log, the fingerprint and the cache read alike) into its own API's
request, sends it (synchronously for the web and Celery tasks, asynchronously for the batch
engine, with the platform's timeout and connection pools), reads back the text, the finish
reason and the usage, and sorts its own errors into the retry policy's outcomes
(`FailureKind`). The retry policy itself (`llm.attempts`) knows no provider.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel

from ..egress import EgressRefused
from ..models import CallOutcome, ModelConfiguration, StructuredMode
from ..transport_util import retry_after_seconds

# Most characters of a reply body that is not a usable reply (an error page, a plain-text
# answer of some other service) kept in the call log and shown on pages.
ERROR_DETAIL_LIMIT = 500
# Words in an error body that show the server refused the request's structured-output format.
FORMAT_WORDS = (
    "response_format",
    "json_schema",
    "response_schema",
    "output_config",
    "output_format",
    "tool_choice",
)


class FailureKind(StrEnum):
    """The retry policy's outcomes: what to do after a failed attempt."""

    RATE_LIMITED = "rate_limited"  # retry after the server's Retry-After (capped)
    TRANSIENT = "transient"  # retry with backoff: timeouts, connection errors, 5xx, overload
    MALFORMED = "malformed"  # a success in name only (no text, not JSON): retry with backoff
    REFUSED = "refused"  # the request as sent was refused (4xx): change it or give up
    PERMANENT = "permanent"  # wrong key, unknown model, wrong endpoint: give up at once


@dataclass
class Usage:
    """Token counts as the platform records them: `prompt_tokens` counts every input token,
    the ones read from (`cached_prompt_tokens`) or written to (`cache_write_tokens`) the
    provider's prompt cache among them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class ProviderReply:
    """What came back from a request that succeeded at the HTTP level."""

    text: str
    finish_reason: str = ""
    usage: Usage = field(default_factory=Usage)
    http_status: int | None = 200
    # Why this reply carries no usable text ("" when it does): a malformed success.
    problem: str = ""
    raw: str = ""  # the body, for the call log when the reply is malformed


@dataclass
class Failure:
    """A failed attempt as the provider classifies it."""

    kind: FailureKind
    outcome: CallOutcome  # how the call log names it
    message: str
    status: int | None = None
    retry_after: float | None = None
    body: str = ""
    usage: Usage = field(default_factory=Usage)
    # The server named the request's structured-output format in its refusal.
    format_refused: bool = False
    # Nothing listens at the address: retrying within a request rarely helps.
    connection_refused: bool = False
    # The platform's egress policy refused the address (`llm.egress`), not the server.
    by_policy: bool = False

    @property
    def retryable(self) -> bool:
        return self.kind in (FailureKind.RATE_LIMITED, FailureKind.TRANSIENT, FailureKind.MALFORMED)


@dataclass(frozen=True)
class ChatRequest:
    """One attempt to send: the platform's request for one configuration."""

    configuration: ModelConfiguration
    api_key: str
    messages: list[dict]
    parameters: dict
    role: str = ""
    schema: type[BaseModel] | None = None


class ChatProvider:
    """Base of every provider. Subclasses set the class attributes and implement the methods."""

    name: str = ""
    label: str = ""
    # Answered in process, without a network (no key, no limits, no cost, never cached).
    is_offline: bool = False
    default_base_url: str = ""
    # The structured modes the provider can be asked for, strongest first.
    structured_modes: tuple[str, ...] = (StructuredMode.JSON_SCHEMA, StructuredMode.PROMPT)
    # Host names that belong to this provider's own API: a configuration of another provider
    # pointing there is told so when it is saved, before any call.
    url_markers: tuple[str, ...] = ()

    def send(self, request: ChatRequest, *, timeout: float) -> ProviderReply:
        """Send one request and wait for its reply; raise whatever the client raises."""
        raise NotImplementedError

    async def send_async(
        self, request: ChatRequest, *, session: Any, timeout: float
    ) -> ProviderReply:
        """The same on an event loop, through `session` (from `async_session`)."""
        raise NotImplementedError

    def async_session(self, *, concurrency: int) -> Any:
        """Clients of one event loop, holding `concurrency` connections per endpoint."""
        return None

    async def close_session(self, session: Any) -> None:
        """Close what `async_session` opened."""

    def classify(self, error: BaseException, *, where: str, timeout: float) -> Failure:
        """Sort an exception raised by `send` into the retry policy's outcomes."""
        raise NotImplementedError


def excerpt(text: str | None, limit: int = ERROR_DETAIL_LIMIT) -> str:
    """A body as the call log keeps it: whole up to `limit` characters, else its beginning and
    a mark saying how much was left out."""
    text = text or ""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters not kept]"


def token_count(value: Any) -> int:
    """A usage field as a count: anything that is not a positive integer counts nothing."""
    return value if isinstance(value, int) and value > 0 else 0


def connection_refused(error: BaseException | None) -> bool:
    """Whether the connection was refused (nothing listens there), anywhere in the chain of
    causes: SDKs wrap the socket's error once or twice."""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, ConnectionRefusedError) or "Connection refused" in str(error):
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


def egress_failure(error: BaseException | None, *, where: str) -> Failure | None:
    """The egress policy's refusal of a connection, found anywhere in the chain of causes
    (the SDKs wrap it as a connection error): permanent, the address will not change."""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, EgressRefused):
            return Failure(
                FailureKind.PERMANENT,
                CallOutcome.FAILED,
                f"Did not connect to {where}: {error.message}",
                by_policy=True,
            )
        error = error.__cause__ or error.__context__
        seen += 1
    return None


def timeout_failure(*, where: str, timeout: float) -> Failure:
    return Failure(
        FailureKind.TRANSIENT, CallOutcome.TIMEOUT, f"No reply from {where} within {timeout:g} s."
    )


def connection_failure(error: BaseException, *, where: str) -> Failure:
    """A connection that failed; a refused one is marked so a probe can stop at once."""
    cause = error.__cause__ or error
    return Failure(
        FailureKind.TRANSIENT,
        CallOutcome.CONNECTION_ERROR,
        f"Could not connect to {where}: {cause}",
        connection_refused=connection_refused(error),
    )


def mentions_format(body: str) -> bool:
    lowered = body.lower()
    return any(word in lowered for word in FORMAT_WORDS)


def status_failure(
    *, status: int, body: str, where: str, retry_after: float | None, overloaded: tuple = ()
) -> Failure:
    """The common reading of an HTTP error status, for providers whose clients expose one."""
    body = excerpt(body)
    message = f"{where} answered HTTP {status}: {body}"
    if status == 429:
        return Failure(
            FailureKind.RATE_LIMITED, CallOutcome.RATE_LIMITED, message, status, retry_after, body
        )
    named = mentions_format(body)
    if status in (400, 422) or (status == 500 and named):
        # A 500 that names the format is a server that crashed on it, not a passing fault.
        return Failure(
            FailureKind.REFUSED,
            CallOutcome.HTTP_ERROR,
            message,
            status,
            None,
            body,
            format_refused=named,
        )
    if status == 408 or status >= 500 or status in overloaded:
        return Failure(
            FailureKind.TRANSIENT, CallOutcome.HTTP_ERROR, message, status, retry_after, body
        )
    if status in (401, 403):
        message = (
            f"{where} rejected the API key (HTTP {status}): check the value of the configuration's "
            f"key variable, and that the key is for this provider. {body}"
        )
    elif status == 404:
        message = (
            f"{where} answered HTTP 404: the model id is unknown there, or the base URL is not "
            f"this provider's API (most OpenAI-compatible servers end in /v1). {body}"
        )
    return Failure(FailureKind.PERMANENT, CallOutcome.HTTP_ERROR, message, status, None, body)


class _Response(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...


class StatusError(Protocol):
    """What an SDK's error for a 4xx or 5xx answer carries: the status and the response."""

    @property
    def status_code(self) -> int: ...

    @property
    def response(self) -> _Response: ...


class ClientErrors(NamedTuple):
    """The exception classes of an HTTP client SDK shaped like OpenAI's and Anthropic's: a
    timeout is a connection error, and a status error carries `status_code` and `response`."""

    timeout: type[BaseException]
    connection: type[BaseException]
    status: type[StatusError]
    base: type[BaseException]


def status_error_body(error: Any) -> str:
    """The body of a status error's response, else the error's own words."""
    try:
        text = error.response.text
    except Exception:  # noqa: BLE001 - the body is a courtesy for the error message
        text = ""
    return text or str(error)


def client_error_failure(
    error: BaseException,
    *,
    where: str,
    timeout: float,
    errors: ClientErrors,
    overloaded: tuple = (),
) -> Failure:
    """The one reading of the errors such an SDK raises; anything else is raised again."""
    if isinstance(error, errors.timeout):
        return timeout_failure(where=where, timeout=timeout)
    if isinstance(error, errors.connection):
        return connection_failure(error, where=where)
    if isinstance(error, errors.status):
        return status_failure(
            status=error.status_code,
            body=status_error_body(error),
            where=where,
            retry_after=retry_after_seconds(error.response.headers),
            overloaded=overloaded,
        )
    if isinstance(error, errors.base):
        return Failure(
            FailureKind.PERMANENT, CallOutcome.FAILED, f"The call to {where} failed: {error}"
        )
    if isinstance(error, ValueError):
        # The client could not decode the body of a 200 (json.JSONDecodeError).
        return Failure(
            FailureKind.MALFORMED,
            CallOutcome.MALFORMED,
            f"{where} answered HTTP 200 with a body that is not JSON: {error}",
            status=200,
        )
    raise error
