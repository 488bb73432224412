"""Request fingerprints and the response cache.

The fingerprint covers everything that shapes a reply: provider, endpoint, model, every
request parameter (sampling, seed, response format), the full messages as sent (including the
configuration's system prompt and any schema instructions) and the schema name. Re-running an
identical request therefore returns the stored reply at no cost, while any change misses.
"""

import hashlib
import json
from collections.abc import Collection

from django.conf import settings

from .models import CallOutcome, LLMCall, LLMResponseCache, ModelConfiguration


def request_fingerprint(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    parameters: dict,
    schema_name: str = "",
) -> str:
    identity = {
        "provider": configuration.provider,
        "endpoint": configuration.endpoint,
        "model_id": configuration.model_id,
        "extra_params": configuration.extra_params or {},
        "parameters": parameters,
        "messages": messages,
        "schema": schema_name,
    }
    encoded = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def cache_enabled(*, configuration: ModelConfiguration, use_cache: bool) -> bool:
    # Offline output is recomputed for free, so caching it would only add rows.
    return use_cache and settings.LLM_CACHE_ENABLED and not configuration.is_offline


def cache_lookup(key: str) -> LLMResponseCache | None:
    return LLMResponseCache.objects.filter(key=key).first()


def cache_lookup_bulk(*, keys: Collection[str]) -> dict[str, LLMResponseCache]:
    """The stored replies of `keys` (one query), by key; a key not stored is absent."""
    return {hit.key: hit for hit in LLMResponseCache.objects.filter(key__in=list(keys))}


def cache_store(
    *,
    key: str,
    configuration: ModelConfiguration,
    response_text: str,
    parsed_json: object = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
) -> None:
    # update_or_create tolerates two workers finishing the same request at once.
    LLMResponseCache.objects.update_or_create(
        key=key,
        defaults={
            "configuration": configuration,
            "response_text": response_text,
            "parsed_json": parsed_json,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        },
    )


def replies_cacheable(calls: Collection[LLMCall]) -> list[LLMResponseCache]:
    """The cache entries of recorded attempts whose reply the gateway keeps: an accepted
    structured reply (validated, so it carries parsed_json) or a chat reply not cut off at
    max_tokens, stored under its request's fingerprint. For attempts restored from a killed
    worker's journal, so the request it asks again is not paid twice."""
    if not settings.LLM_CACHE_ENABLED:
        return []
    return [
        LLMResponseCache(
            key=call.fingerprint,
            configuration_id=call.configuration_id,
            response_text=call.response_text,
            parsed_json=call.parsed_json,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
        )
        for call in calls
        if call.outcome == CallOutcome.SUCCESS
        and not call.is_offline
        and call.fingerprint
        # "length": the endpoint stopped at the token limit (TransportReply.cut_off).
        and (call.parsed_json is not None or call.finish_reason != "length")
    ]
