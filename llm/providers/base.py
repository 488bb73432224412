"""What a provider is: the one small interface every model provider implements, on plain values.

A provider is built from a model name, a base URL, a key and a `ProviderConfig` (inspect_ai's
`ModelAPI(model_name, base_url, api_key, config)` is the model): it never sees the database row
the platform keeps them in (`llm.connect` turns a configuration into these values), and no
module under `llm/providers/` imports Django. It turns the platform's request (OpenAI-shaped
messages and parameters, the same for every provider, so the call log, the fingerprint and the
cache read alike) into its own API's request, sends it (synchronously for the web and Celery
tasks, asynchronously for the batch engine), reads back the text, the finish reason and the
usage, and sorts its own errors into the retry policy's outcomes (`FailureKind`). The retry
policy itself (`llm.attempts`) knows no provider.

What a provider knows about itself (`ProviderFacts`: label, family, key hosts, structured
modes, refusal and rate-limit wording) is declared in its package's `__init__`, read without
loading its client library; the client is in the package's `client` module.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Protocol

import httpx2
from pydantic import BaseModel

from .ratelimits import RateLimits


class OutputMode(StrEnum):
    """How a model is asked for JSON, strongest first (the values a configuration stores)."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"


# Strongest first: negotiation moves down this list, never up.
MODE_ORDER: tuple[OutputMode, ...] = tuple(OutputMode)


class FailureOutcome(StrEnum):
    """How the call log names a failed attempt (values of `llm.models.CallOutcome`)."""

    HTTP_ERROR = "http_error"
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    CONNECTION_ERROR = "connection_error"
    MALFORMED = "malformed"
    FAILED = "failed"
    # The provider answered and declined the request as sent (a blocked prompt, a withheld
    # reply): billed as the provider bills it, never asked again.
    REFUSED = "refused"


class FailureKind(StrEnum):
    """The retry policy's outcomes: what to do after a failed attempt."""

    RATE_LIMITED = "rate_limited"  # retry after the server's Retry-After (capped)
    TRANSIENT = "transient"  # retry with backoff: timeouts, connection errors, 5xx, overload
    MALFORMED = "malformed"  # a success in name only (no text, not JSON): retry with backoff
    REFUSED = "refused"  # the request as sent was refused (4xx, a blocked prompt): give up
    PERMANENT = "permanent"  # wrong key, unknown model, wrong endpoint: give up at once


@dataclass(frozen=True)
class ProviderFacts:
    """Everything a provider knows about itself, readable without loading its client."""

    name: str  # what a configuration stores in its `provider` field
    label: str
    # The maker of every model the provider serves; "" when it serves any maker's models and
    # the model id tells (`model_families`).
    family: str = ""
    # (regular expression on the lower-cased model id, family), first match wins.
    model_families: tuple[tuple[str, str], ...] = ()
    default_base_url: str = ""
    # Host names of the provider's own API: a configuration of another provider pointing
    # there is told so when it is saved, before any call.
    url_markers: tuple[str, ...] = ()
    # The API-key variables of the provider's services and the hosts (shell patterns) each
    # may be sent to; a deployment adds or replaces bindings in LLM_API_KEY_HOSTS.
    key_hosts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The structured modes the provider can be asked for, strongest first.
    structured_modes: tuple[OutputMode, ...] = (OutputMode.JSON_SCHEMA, OutputMode.PROMPT)
    # Words (lower case) in an error body that show the server refused the request's
    # structured-output format: the configuration then steps down a mode.
    format_refusal_words: tuple[str, ...] = ()
    # Finish reasons and prompt-block reasons (as the provider spells them) that mean the
    # provider declined to answer this request: recorded as refused, never retried.
    refusal_reasons: tuple[str, ...] = ()
    # Words (lower case) in an error body that show a rate limit whatever the status says.
    rate_limit_words: tuple[str, ...] = ()
    # Statuses of a passing overload (besides 408 and 5xx): retried with backoff.
    overloaded_statuses: tuple[int, ...] = ()
    # Answered in process, without a network (no key, no limits, no cost, never cached).
    is_offline: bool = False
    # The provider has a batch API (half price, an answer within a day) that a run's judging
    # may go through (`batches` module of its package, loaded when a batch is sent).
    has_batches: bool = False
    # The provider keeps a completion sent with `store: true` and finds it again by the
    # request's metadata (`ChatProvider.stored_usage`): what an attempt whose reply was never
    # read was billed can be asked (`llm.reconcile`).
    keeps_completions: bool = False


@dataclass(frozen=True)
class ProviderConfig:
    """What a provider reads of its configuration besides the model, address and key."""

    timeout: float  # seconds an attempt may take (the platform's LLM_TIMEOUT_SECONDS)
    # The offline demo model's behaviour ("careful", "agreeable", …; `offline_profile`).
    profile: str = ""


class HttpClients(Protocol):
    """Where a provider's SDK gets its HTTP clients: the platform's egress policy hands out
    clients that connect only where it allows (`llm.egress_http`)."""

    def client(self, *, limits: httpx2.Limits | None = None) -> httpx2.Client: ...

    def async_client(
        self, *, limits: httpx2.Limits | None = None, http2: bool = False
    ) -> httpx2.AsyncClient: ...


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
    # The provider declined this request (`ProviderFacts.refusal_reasons`): asking again
    # gets the same answer, so it is not retried.
    refused: bool = False
    # What the provider's rate-limit headers said was left (`llm.limits` paces by it).
    rate_limits: RateLimits = field(default_factory=RateLimits)
    # Answered in a batch (`llm.batches`): billed at the configuration's batch price.
    batched: bool = False


@dataclass
class Failure:
    """A failed attempt as the provider classifies it."""

    kind: FailureKind
    outcome: FailureOutcome  # how the call log names it
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
    # Why the provider declined the request (a refusal's finish or block reason), for the log.
    finish_reason: str = ""

    @property
    def retryable(self) -> bool:
        return self.kind in (FailureKind.RATE_LIMITED, FailureKind.TRANSIENT, FailureKind.MALFORMED)


@dataclass(frozen=True)
class BatchState:
    """Where a batch is at its provider."""

    id: str
    status: str  # the provider's own word ("in_progress", "ended", "completed"…)
    ended: bool  # no request of it will be answered any more: its results can be read
    failed: str = ""  # the provider refused the whole batch: why (its requests go back)


@dataclass
class BatchResult:
    """One request's result in an ended batch."""

    custom_id: str
    status: str  # "succeeded", "errored" or "expired" (cancelled counts as expired)
    reply: ProviderReply | None = None
    error: str = ""
    http_status: int | None = None


@dataclass(frozen=True)
class StoredCompletion:
    """A completion the provider kept: its id and what it billed."""

    id: str
    usage: Usage


@dataclass(frozen=True)
class ChatRequest:
    """One attempt to send: the platform's messages and parameters, as plain values."""

    messages: list[dict]
    parameters: dict
    role: str = ""
    schema: type[BaseModel] | None = None


class ChatProvider:
    """Base of every provider. Subclasses set `facts` and implement the methods."""

    facts: ClassVar[ProviderFacts]

    def __init__(
        self,
        model_name: str,
        base_url: str,
        api_key: str,
        config: ProviderConfig,
        *,
        http: HttpClients,
    ) -> None:
        self.model_name = model_name
        self.base_url = base_url
        self.api_key = api_key
        self.config = config
        self.http = http

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def is_offline(self) -> bool:
        return self.facts.is_offline

    @property
    def where(self) -> str:
        """How errors name the endpoint and model."""
        return f"{self.base_url} (model {self.model_name!r})"

    def send(self, request: ChatRequest) -> ProviderReply:
        """Send one request and wait for its reply; raise whatever the client raises."""
        raise NotImplementedError

    async def send_async(self, request: ChatRequest, *, session: Any) -> ProviderReply:
        """The same on an event loop, through `session` (from `async_session`)."""
        raise NotImplementedError

    def async_session(self, *, concurrency: int) -> Any:
        """Clients of one event loop, holding `concurrency` connections per endpoint; shared
        by every provider of this class on the loop (keyed inside by address and key)."""
        return None

    async def close_session(self, session: Any) -> None:
        """Close what `async_session` opened."""

    def classify(self, error: BaseException) -> Failure:
        """Sort an exception raised by `send` into the retry policy's outcomes."""
        raise NotImplementedError

    def stored_usage(self, metadata: dict[str, str]) -> "StoredCompletion | None":
        """The completion the provider kept for a request sent with `store: true` and this
        `metadata`, or None when it has none; raises whatever the client raises."""
        raise NotImplementedError
