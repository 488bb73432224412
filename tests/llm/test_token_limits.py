"""Token-per-minute limits and pacing from the provider's rate-limit headers (llm.limits):
the token window of each backend (reserve, correct, expire, pause), and the gateway against
fakes that enforce an input TPM and hold the client to the pauses their headers announce."""

import asyncio
import multiprocessing
import time
import uuid
from datetime import UTC, datetime

import pytest
from django.db import connections

from core.exceptions import ApplicationError
from llm import limits
from llm.aio import AsyncGateway
from llm.gateway import chat
from llm.limits import Tokens, common
from llm.models import LLMCall
from llm.plan import chat_steps
from llm.providers.base import ChatRequest, ProviderReply, Usage
from llm.providers.ratelimits import duration_seconds, rate_limits_of
from tests.fake_openai import Behaviour
from tests.llm.factories import ModelConfigurationFactory

pytestmark = pytest.mark.embedded

WINDOW = 1.0  # seconds: the token window of these tests (a minute in production)


def _redis_limits(settings) -> limits.RedisLimits:
    redis = pytest.importorskip("redis")
    url = settings.LLM_LIMITS_REDIS_URL
    if not url.startswith(("redis://", "rediss://")):
        pytest.skip("No Redis configured (CELERY_BROKER_URL or LLM_LIMITS_REDIS_URL)")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=0.5).ping()
    except redis.exceptions.RedisError:
        pytest.skip("Redis is not running")
    return limits.RedisLimits(url)


@pytest.fixture(params=["database", "redis"])
def limits_backend(request, settings, monkeypatch):
    # A fresh key prefix per test, so an earlier (or parallel) run's tokens never count.
    settings.LLM_LIMITS_KEY_PREFIX = f"test-tokens:{uuid.uuid4().hex}"
    monkeypatch.setattr(common, "TOKEN_WINDOW_SECONDS", WINDOW)
    chosen = limits.DatabaseLimits() if request.param == "database" else _redis_limits(settings)
    limits.backend_set(chosen)
    yield chosen
    limits.backend_set(None)


def _token() -> str:
    return uuid.uuid4().hex


# --- the window of each backend -----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_reservation_counts_until_corrected_to_the_tokens_used(limits_backend):
    configuration = ModelConfigurationFactory(input_tokens_per_minute=100)
    first = _token()
    assert limits_backend.try_acquire(configuration, first, Tokens(input=80)) == 0
    # 80 reserved + 30 > 100: wait about until the reservation leaves the window.
    wait = limits_backend.try_acquire(configuration, _token(), Tokens(input=30))
    assert 0.5 * WINDOW < wait <= WINDOW + 0.05
    # The reply said 40 (the rest was read from the prompt cache, say): now 30 more fit.
    limits_backend.settle(configuration.pk, first, Tokens(input=40))
    assert limits_backend.try_acquire(configuration, _token(), Tokens(input=30)) == 0
    assert limits_backend.try_acquire(configuration, _token(), Tokens(input=31)) > 0


@pytest.mark.slow(reason="waits for the token window to pass")
@pytest.mark.django_db(transaction=True)
def test_reserved_tokens_leave_the_window_after_it_passes(limits_backend):
    configuration = ModelConfigurationFactory(output_tokens_per_minute=500)
    assert limits_backend.try_acquire(configuration, _token(), Tokens(output=300)) == 0
    time.sleep(WINDOW / 2)
    assert limits_backend.try_acquire(configuration, _token(), Tokens(output=200)) == 0
    # Full: the next 100 fit once the first reservation (300) has left the window...
    wait = limits_backend.try_acquire(configuration, _token(), Tokens(output=100))
    assert 0 < wait <= WINDOW / 2 + 0.05
    time.sleep(wait + 0.05)
    assert limits_backend.try_acquire(configuration, _token(), Tokens(output=100)) == 0
    # ... and the one after that waits for the second (200), not the whole window again.
    wait = limits_backend.try_acquire(configuration, _token(), Tokens(output=250))
    assert 0 < wait <= WINDOW / 2 + 0.05


@pytest.mark.django_db(transaction=True)
def test_a_request_larger_than_the_budget_goes_alone(limits_backend):
    configuration = ModelConfigurationFactory(input_tokens_per_minute=100)
    assert limits_backend.try_acquire(configuration, _token(), Tokens(input=5000)) == 0
    assert limits_backend.try_acquire(configuration, _token(), Tokens(input=1)) > 0


@pytest.mark.django_db(transaction=True)
def test_a_pause_holds_every_request_until_it_ends_and_is_never_shortened(limits_backend):
    configuration = ModelConfigurationFactory(requests_per_minute=100)
    limits_backend.pace(configuration.pk, 0.6)
    limits_backend.pace(configuration.pk, 0.1)  # a shorter pause does not end the longer one
    wait = limits_backend.try_acquire(configuration, _token())
    assert 0.4 < wait <= 0.6
    time.sleep(wait + 0.05)
    assert limits_backend.try_acquire(configuration, _token()) == 0


# --- the estimate and the headers -----------------------------------------------------------


@pytest.mark.django_db
def test_an_attempt_reserves_its_characters_over_four_and_its_max_tokens():
    configuration = ModelConfigurationFactory(input_tokens_per_minute=1000)
    request = ChatRequest([{"role": "user", "content": "x" * 41}], {"max_tokens": 77})
    assert limits.tokens_needed(configuration, request) == Tokens(input=11, output=77)
    unlimited = ModelConfigurationFactory()
    assert limits.tokens_needed(unlimited, request) == Tokens()


def test_the_tokens_used_leave_out_cache_reads_and_a_reply_without_usage_keeps_its_estimate():
    cached = ProviderReply(
        "hi",
        usage=Usage(
            prompt_tokens=1200,
            completion_tokens=40,
            cached_prompt_tokens=1000,
            cache_write_tokens=100,
        ),
    )
    assert limits.tokens_used(cached) == Tokens(input=200, output=40)  # writes count
    assert limits.tokens_used(ProviderReply("hi")) is None


def test_openai_and_anthropic_rate_limit_headers_are_read():
    openai = rate_limits_of(
        {
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-reset-requests": "1m2.5s",
            "x-ratelimit-remaining-tokens": "5000",
            "x-ratelimit-reset-tokens": "250ms",
        }
    )
    assert openai.remaining == {"requests": 0, "tokens": 5000}
    assert openai.reset_seconds == {"requests": 62.5, "tokens": 0.25}
    assert openai.pause_seconds({"tokens": 100}) == 62.5  # no request left
    anthropic = rate_limits_of(
        {
            "anthropic-ratelimit-requests-remaining": "10",
            "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:30Z",
            "anthropic-ratelimit-input-tokens-remaining": "90",
            "anthropic-ratelimit-input-tokens-reset": "2026-01-01T00:00:03.5Z",
        },
        now=1767225600.0,  # 2026-01-01T00:00:00Z
    )
    assert anthropic.reset_seconds == {"requests": 30.0, "input_tokens": 3.5}
    assert anthropic.pause_seconds({"input_tokens": 80}) == 0
    assert anthropic.pause_seconds({"input_tokens": 91}) == 3.5  # less left than needed
    assert duration_seconds("6m0s") == 360
    assert duration_seconds("soon") is None
    assert rate_limits_of({}).pause_seconds({}) == 0


# --- the gateway against the fakes ----------------------------------------------------------


def _ask(configuration, text: str) -> None:
    chat(
        configuration=configuration,
        messages=[{"role": "user", "content": text}],
        role="target",
        purpose="tests.token_limits",
        use_cache=False,
    )


@pytest.mark.slow(reason="the second request waits for a reset 1 s ahead")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("header_style", ["openai", "anthropic"])
def test_headers_saying_nothing_is_left_hold_the_next_request_until_the_reset(
    fake_openai, fake_anthropic, limits_backend, header_style
):
    if header_style == "openai":
        server = fake_openai
        configuration = ModelConfigurationFactory(
            base_url=server.base_url, requests_per_minute=1000
        )
    else:
        server = fake_anthropic
        configuration = ModelConfigurationFactory(
            provider="anthropic",
            base_url=server.base_url,
            model_id="claude-test",
            api_key_env="ANTHROPIC_API_KEY",
            requests_per_minute=1000,
        )

    def no_request_left(request) -> Behaviour:
        # Written when the reply is: the reset is 1 s after the reply leaves the fake.
        if header_style == "openai":
            return Behaviour(
                headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
            )
        reset = datetime.fromtimestamp(time.time() + 1.0, tz=UTC)
        return Behaviour(
            headers={
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
            }
        )

    server.enqueue(responder=no_request_left)
    _ask(configuration, "first")
    answered = time.monotonic()
    _ask(configuration, "second")
    # The fake refuses (429) any request that arrives before the reset it announced.
    assert server.refused == []
    assert server.request_count == 2
    # Held until the reset the first reply announced, on the fake's own clock: the announced
    # pause was real (about 1 s), and the second request left after it. (Measured from when
    # the client finished the first call, a loaded machine could spend half of that second
    # before the client even read the reply's headers.)
    assert server.paused_until - server.spans[0][1] >= 0.5
    assert server.spans[1][0] >= server.paused_until
    waits = list(LLMCall.objects.order_by("pk").values_list("limit_wait_ms", flat=True))
    assert waits[0] < 500
    # The hold is recorded as a limit wait: at least what was left of the pause.
    assert waits[1] >= 1000 * (server.paused_until - answered) - 50
    assert waits[1] > waits[0]


@pytest.mark.django_db(transaction=True)
def test_without_pacing_the_strict_fake_refuses_a_request_during_its_announced_pause(
    fake_openai, settings
):
    # The check above is not vacuous: a client that ignores the headers is refused.
    settings.LLM_MAX_RETRIES = 0
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url)  # no limits
    fake_openai.enqueue(
        headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
    )
    _ask(configuration, "first")
    with pytest.raises(ApplicationError, match="429"):
        _ask(configuration, "second")
    assert len(fake_openai.refused) == 1


def _worker(configuration_pk: int, worker: int, calls: int, failures) -> None:
    from llm.models import ModelConfiguration

    try:
        configuration = ModelConfiguration.objects.get(pk=configuration_pk)
        for index in range(calls):
            # Words of four letters or more: the estimate (characters / 4) is not below what
            # the fake counts (words), as a real tokenizer's count is not far from it.
            _ask(configuration, f"worker {worker} asks question {index} " + "about limits " * 10)
    except Exception as error:  # noqa: BLE001 - reported to the test
        failures.put(repr(error))
    finally:
        connections.close_all()


@pytest.mark.slow(reason="two processes send 24 calls through a 1 s, 150-token input budget")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_two_worker_processes_keep_within_the_input_tpm_and_are_never_refused(
    fake_openai, fake_anthropic, limits_backend, settings, provider
):
    settings.LLM_MAX_RETRIES = 0  # a 429 would fail the call instead of being retried away
    # The Anthropic fake also announces what is left: the pacing joins the token window.
    server = fake_openai if provider == "openai" else fake_anthropic
    server.input_tokens_per_minute = 150
    server.window_seconds = WINDOW
    fields = (
        {}
        if provider == "openai"
        else {"provider": "anthropic", "model_id": "claude", "api_key_env": "ANTHROPIC_API_KEY"}
    )
    configuration = ModelConfigurationFactory(
        base_url=server.base_url, input_tokens_per_minute=150, **fields
    )
    connections.close_all()  # the children open their own connections
    context = multiprocessing.get_context("fork")
    failures = context.Queue()
    workers = [
        context.Process(target=_worker, args=(configuration.pk, n, 12, failures)) for n in (1, 2)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    reported = []
    while not failures.empty():
        reported.append(failures.get())
    assert reported == []
    assert [process.exitcode for process in workers] == [0, 0]
    assert server.refused == []
    assert server.request_count == 24
    assert server.peak_window_tokens <= 150
    # The budget was binding: 24 calls of 25 tokens are 600, four windows' worth at least.
    starts = sorted(start for start, _ in server.spans)
    assert starts[-1] - starts[0] > 3 * WINDOW
    calls = LLMCall.objects.filter(configuration=configuration, outcome="success")
    assert calls.count() == 24
    assert max(calls.values_list("limit_wait_ms", flat=True)) > 100


# --- the batch engine's event loop ------------------------------------------------------------


class _Calls:
    """The engine's call sink, kept in memory (these calls have no cache step)."""

    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, call, prompt) -> None:
        self.calls.append(call)

    def sending(self, call, prompt) -> None:
        pass


async def engine_calls_drive(gateway, configuration, texts: list[str], sink) -> None:
    """One engine call per text through `gateway`, all at once, into `sink` (no cache step)."""
    await asyncio.gather(
        *(
            gateway.drive(
                chat_steps(
                    configuration=configuration,
                    messages=[{"role": "user", "content": text}],
                    role="target",
                    purpose="tests.token_limits",
                    use_cache=False,
                    sink=sink,
                ),
                sink=None,  # no cache step; the Redis backend needs no database thread
            )
            for text in texts
        )
    )


def _engine_calls(configuration, texts: list[str]) -> list:
    sink = _Calls()

    async def scenario() -> None:
        gateway = AsyncGateway(concurrency=8)
        await engine_calls_drive(gateway, configuration, texts, sink)
        await gateway.close()

    asyncio.run(scenario())
    return sink.calls


@pytest.mark.slow(reason="twelve calls through a 1 s, 150-token input budget")
@pytest.mark.django_db(transaction=True)
def test_the_engine_keeps_within_the_input_tpm(fake_openai, settings, monkeypatch):
    settings.LLM_MAX_RETRIES = 0
    limits_backend = _redis_limits(settings)
    settings.LLM_LIMITS_KEY_PREFIX = f"test-tokens:{uuid.uuid4().hex}"
    monkeypatch.setattr(common, "TOKEN_WINDOW_SECONDS", WINDOW)
    limits.backend_set(limits_backend)
    fake_openai.input_tokens_per_minute = 150
    fake_openai.window_seconds = WINDOW
    configuration = ModelConfigurationFactory(
        base_url=fake_openai.base_url, input_tokens_per_minute=150, max_concurrency=4
    )
    started = time.monotonic()
    try:
        calls = _engine_calls(
            configuration, [f"engine asks question {n} " + "about limits " * 10 for n in range(12)]
        )
    finally:
        limits.backend_set(None)
    assert fake_openai.refused == []
    assert [call.outcome for call in calls] == ["success"] * 12
    assert fake_openai.peak_window_tokens <= 150
    assert fake_openai.max_in_flight <= 4  # the lease per call holds max_concurrency too
    assert time.monotonic() - started > WINDOW  # 12 × 24 tokens: two windows at least
    assert max(call.limit_wait_ms for call in calls) > 100


@pytest.mark.slow(reason="the requests wait for a reset 1 s ahead")
@pytest.mark.django_db(transaction=True)
def test_the_engines_permits_wait_for_the_reset_the_headers_announce(fake_openai, settings):
    limits_backend = _redis_limits(settings)
    settings.LLM_LIMITS_KEY_PREFIX = f"test-tokens:{uuid.uuid4().hex}"
    limits.backend_set(limits_backend)
    configuration = ModelConfigurationFactory(base_url=fake_openai.base_url, max_concurrency=1)
    fake_openai.enqueue(
        headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
    )
    try:
        calls = _engine_calls(configuration, ["first", "second", "third"])
    finally:
        limits.backend_set(None)
    assert fake_openai.refused == []
    assert [call.outcome for call in calls] == ["success"] * 3
    starts = sorted(start for start, _ in fake_openai.spans)
    ends = sorted(end for _, end in fake_openai.spans)
    assert starts[1] - ends[0] >= 0.9
