"""Completions the provider keeps: what an attempt carries so its bill can be asked for later.

A configuration with `store_completions` (OpenAI-compatible providers only: their facts say
`keeps_completions`) sends every attempt with `store: true` and one metadata pair naming it,
`{"impactbench_attempt": "<group id>:<attempt>"}` — the natural key of its call-log row, which
the journal's lines carry too. The call-log row records the parameters as sent, so the reaper
(`llm.reconcile`) knows which rows of unknown outcome can be looked up. Without the option the
parameters, and so the request body, are left exactly as they were.
"""

from .connect import provider_facts
from .models import ModelConfiguration

STORE_KEY = "impactbench_attempt"


def attempt_key(group_id: object, attempt: int) -> str:
    """The metadata value naming one attempt (its row's group id and attempt number)."""
    return f"{group_id}:{attempt}"


def stores_completions(configuration: ModelConfiguration) -> bool:
    """Whether the configuration's attempts are sent for the provider to keep."""
    return configuration.store_completions and provider_facts(configuration).keeps_completions


def stored_parameters(configuration: ModelConfiguration, parameters: dict, key: str) -> dict:
    """`parameters` as the attempt named `key` sends them: unchanged (the same object) unless
    the configuration has the provider keep its completions."""
    if not stores_completions(configuration):
        return parameters
    metadata = {**(parameters.get("metadata") or {}), STORE_KEY: key}
    return {**parameters, "store": True, "metadata": metadata}
