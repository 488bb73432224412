"""The one way the platform talks to models.

    from llm.gateway import chat, structured, chat_for_role, structured_for_role

    result = structured_for_role(
        role=ModelRole.JUDGE,
        purpose="evaluations.judge_verdict",
        messages=[{"role": "user", "content": prompt}],
        schema=Verdict,
        seed=run_seed,
    )
    result.output  # a validated Verdict

Prompt hygiene: any text a person wrote (a submission, a scenario, a transcript) is placed in a
prompt only through `core.sanitize.fence_user_text(text, label=...)`, and the prompt says that
fenced text is data, not instructions. Prompts live in one module per calling app.

Every call is recorded in `LLMCall`, one row per attempt (retries, re-asks, cache hits), with
tokens, latency, cost estimate and outcome. Identical requests are answered from the response
cache unless `use_cache=False`; pass a different seed to get a fresh sample (repeated judging).
Each configuration's provider (`llm.providers`) sends its requests; the offline demo model is
one of them, answered without any network: its results carry `is_offline=True` and must be
shown with the "offline demo model" label.

The call itself is written once as steps (`llm.plan`); this module drives them synchronously
(`llm.transport`, one row written per attempt), the batch engine asynchronously (`llm.aio`).
"""

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from . import transport
from .attempts import Attempt, Downgrade, Wait
from .cache import cache_lookup, cache_store
from .exceptions import LLMError, StructuredOutputError
from .models import ModelConfiguration
from .plan import (
    CacheLookup,
    CacheStore,
    ChatResult,
    Steps,
    StructuredResult,
    chat_steps,
    larger_token_limit,
    structured_steps,
)
from .selectors import configuration_for_role

T = TypeVar("T", bound=BaseModel)


__all__ = [
    "ChatResult",
    "LLMError",
    "StructuredOutputError",
    "StructuredResult",
    "chat",
    "chat_for_role",
    "drive",
    "larger_token_limit",
    "structured",
    "structured_for_role",
]


def drive(steps: Steps, *, on_retry: Callable[[Wait], None] | None = None) -> Any:
    """Run a gateway call's steps here: HTTP with the sync client, the cache in the database.
    `on_retry` hears each wait before a retry (which attempt failed, why, and for how long)."""
    reply: Any = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as done:
            return done.value
        if isinstance(step, Wait) and on_retry is not None:
            on_retry(step)
        if isinstance(step, Attempt | Wait | Downgrade):
            reply = transport.run_step(step)
        elif isinstance(step, CacheLookup):
            reply = cache_lookup(step.key)
        elif isinstance(step, CacheStore):
            cache_store(
                key=step.key,
                configuration=step.configuration,
                response_text=step.response_text,
                parsed_json=step.parsed_json,
                prompt_tokens=step.prompt_tokens,
                completion_tokens=step.completion_tokens,
            )
            reply = None
        else:  # pragma: no cover - a programming error
            raise TypeError(f"Unknown gateway step {step!r}")


def chat(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    **params: Any,
) -> ChatResult:
    """A free-text reply. `params` override the configuration's request parameters."""
    return drive(
        chat_steps(
            configuration=configuration,
            messages=messages,
            role=role,
            purpose=purpose,
            seed=seed,
            use_cache=use_cache,
            params=params,
        )
    )


def structured(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    schema: type[T],
    role: str,
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    reasks: int | None = None,
    negotiate: bool = True,
    fail_fast: bool = False,
    on_retry: Callable[[Wait], None] | None = None,
) -> StructuredResult[T]:
    """A reply validated against `schema`; re-asks with the validation error when it is not.

    Raises StructuredOutputError (carrying the last raw reply) once `reasks` (default
    settings.LLM_STRUCTURED_REASKS) re-asks are spent. `negotiate`: a refused response format
    moves the configuration down a structured mode; `fail_fast`: a refused connection is not
    retried; `on_retry`: see `drive`.
    """
    return drive(
        structured_steps(
            configuration=configuration,
            messages=messages,
            schema=schema,
            role=role,
            purpose=purpose,
            seed=seed,
            use_cache=use_cache,
            reasks=reasks,
            negotiate=negotiate,
            fail_fast=fail_fast,
        ),
        on_retry=on_retry,
    )


def chat_for_role(
    *,
    role: str,
    messages: list[dict],
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
    **params: Any,
) -> ChatResult:
    """`chat` with the role's default configuration (ApplicationError when there is none)."""
    return chat(
        configuration=configuration_for_role(role),
        messages=messages,
        role=role,
        purpose=purpose,
        seed=seed,
        use_cache=use_cache,
        **params,
    )


def structured_for_role(
    *,
    role: str,
    messages: list[dict],
    schema: type[T],
    purpose: str,
    seed: int | None = None,
    use_cache: bool = True,
) -> StructuredResult[T]:
    """`structured` with the role's default configuration."""
    return structured(
        configuration=configuration_for_role(role),
        messages=messages,
        schema=schema,
        role=role,
        purpose=purpose,
        seed=seed,
        use_cache=use_cache,
    )
