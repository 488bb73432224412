"""Writes of the call log, prompt texts and response cache in bulk, for a caller that batches them.

The evaluation engine buffers the attempts and cache entries of many gateway calls and writes
them together with its own rows, in one transaction. These services run inside the caller's
transaction (`savepoint=False`: no savepoint statements around a bulk insert that is all or
nothing anyway) and issue one multi-row INSERT per table; prompt texts and cache entries skip
the keys already stored (ON CONFLICT DO NOTHING), so two batches racing for one key both commit.
"""

from collections.abc import Collection

from django.db import transaction

from .models import LLMCall, LLMResponseCache, PromptText
from .plan import CacheStore


@transaction.atomic(savepoint=False)
def calls_record_bulk(*, calls: Collection[LLMCall], prompts: Collection[PromptText]) -> None:
    """Insert unsaved attempts and the prompt texts they point to (prompts first)."""
    if prompts:
        PromptText.objects.bulk_create(list(prompts), ignore_conflicts=True)
    if calls:
        LLMCall.objects.bulk_create(list(calls))


@transaction.atomic(savepoint=False)
def cache_entries_store_bulk(*, entries: Collection[CacheStore]) -> None:
    """Store replies in the response cache; a key already stored keeps its first reply."""
    if entries:
        LLMResponseCache.objects.bulk_create(
            [
                LLMResponseCache(
                    key=entry.key,
                    configuration=entry.configuration,
                    response_text=entry.response_text,
                    parsed_json=entry.parsed_json,
                    prompt_tokens=entry.prompt_tokens,
                    completion_tokens=entry.completion_tokens,
                )
                for entry in entries
            ],
            ignore_conflicts=True,
        )
