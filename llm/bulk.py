"""Writes of the call log, prompt texts and response cache in bulk, for a caller that batches them.

The evaluation engine buffers the attempts and cache entries of many gateway calls and writes
them together with its own rows, in one transaction. These services run inside the caller's
transaction (`savepoint=False`: no savepoint statements around a bulk insert that is all or
nothing anyway) and issue one multi-row INSERT per table; prompt texts and cache entries skip
the keys already stored (ON CONFLICT DO NOTHING), so two batches racing for one key both commit.
Attempts are written on their natural key (group, attempt number), so writing a batch again
after a commit that applied on the server but failed on the client stores nothing twice and
gives every attempt the id of its stored row.
"""

from collections.abc import Collection

from django.db import transaction

from .cache import replies_cacheable
from .models import LLMCall, LLMResponseCache, PromptText
from .plan import CacheStore


@transaction.atomic(savepoint=False)
def calls_record_bulk(*, calls: Collection[LLMCall], prompts: Collection[PromptText]) -> None:
    """Insert attempts and the prompt texts they point to (prompts first); idempotent."""
    if prompts:
        PromptText.objects.bulk_create(list(prompts), ignore_conflicts=True)
    if calls:
        calls = list(calls)
        for call in calls:
            # Ids from an earlier try of this write may belong to a rolled-back insert.
            call.pk = None
            call._state.adding = True
        # ON CONFLICT … DO UPDATE (of a column that cannot differ) returns the stored row's id.
        LLMCall.objects.bulk_create(
            calls,
            update_conflicts=True,
            unique_fields=["group_id", "attempt"],
            update_fields=["attempt"],
        )


@transaction.atomic
def calls_restore_bulk(*, calls: Collection[LLMCall], prompts: Collection[PromptText]) -> None:
    """Insert journaled attempts the call log lacks (a stored attempt keeps its row), and put
    the replies the gateway would have cached in the response cache (a key already stored keeps
    its first reply), so the request asked again after the crash is answered from there."""
    if prompts:
        PromptText.objects.bulk_create(list(prompts), ignore_conflicts=True)
    if calls:
        LLMCall.objects.bulk_create(list(calls), ignore_conflicts=True)
        LLMResponseCache.objects.bulk_create(replies_cacheable(calls), ignore_conflicts=True)


def calls_already_stored(*, calls: Collection[LLMCall]) -> int:
    """How many of these attempts the call log holds (by natural key)."""
    keys = {(call.group_id, call.attempt) for call in calls}
    stored = LLMCall.objects.filter(group_id__in={g for g, _a in keys}).values_list(
        "group_id", "attempt"
    )
    return sum(1 for key in stored if key in keys)


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
