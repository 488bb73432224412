"""Attempts of unknown outcome settled with the provider's own records.

A worker killed with a reply unread leaves its attempt in the call log as "outcome unknown"
with no tokens (restored from its journal): the provider may have answered and billed it. A
configuration with `store_completions` sends every attempt with `store: true` and metadata
naming it (`llm.stored`), so the provider keeps the completion and finds it again by that
metadata. The reaper (`calls_reconcile`) looks such rows up LLM_RECONCILE_AFTER_SECONDS after
they were restored:

- found: the row gets the provider's prompt, completion and cached tokens and their cost
  (priced as any row), and its `CallReconciliation` says "reconciled". The UPDATE of the row
  reaches the run's running totals through their triggers (`llm.models.usage`);
- not found LLM_RECONCILE_GIVE_UP_SECONDS after it was restored: "not billed", never answered;
- the provider unreachable (or answering an error): asked again a while later, never raised.

Anthropic and Google keep no per-request records to ask, and a configuration without the
option sent no metadata: their rows of unknown outcome stay unknown, and the run's cost a lower
bound. Reconciling a row twice (two reapers) writes the same figures.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .connect import provider_for
from .exceptions import LLMError
from .models import (
    SETTLED_STATES,
    CallOutcome,
    CallReconciliation,
    LLMCall,
    ReconcileState,
)
from .providers import registry
from .providers.base import ChatProvider, StoredCompletion
from .stored import STORE_KEY

logger = logging.getLogger(__name__)

# At most this many rows are looked up per sweep (one provider request each), so a sweep stays
# short; the rest wait for the next.
RECONCILE_BATCH = 200


@dataclass(frozen=True)
class ReconcileReport:
    reconciled: int = 0
    not_billed: int = 0
    retried: int = 0  # not found yet, or the provider could not be asked


def reconcilable_calls(now: datetime) -> "list[LLMCall]":
    """Rows of unknown outcome sent for the provider to keep, due for a lookup."""
    after = timedelta(seconds=settings.LLM_RECONCILE_AFTER_SECONDS)
    due = Q(reconciliation__isnull=True) | Q(
        reconciliation__state=ReconcileState.PENDING, reconciliation__checked_at__lte=now - after
    )
    # Only providers that keep completions: a row of a configuration since moved to another
    # provider stays unknown, and never takes a place in the sweep's batch.
    keeping = [name for name, facts in registry.all_facts().items() if facts.keeps_completions]
    return list(
        LLMCall.objects.filter(
            due,
            configuration__provider__in=keeping,
            outcome=CallOutcome.UNKNOWN,
            is_offline=False,
            parameters__metadata__has_key=STORE_KEY,
            created_at__lte=now - after,
        )
        .select_related("configuration")
        .order_by("created_at", "pk")[:RECONCILE_BATCH]
    )


def calls_reconcile(*, now: datetime | None = None) -> ReconcileReport:
    """Look up the due rows of unknown outcome at their providers (see the module docstring)."""
    now = now or timezone.now()
    give_up = now - timedelta(seconds=settings.LLM_RECONCILE_GIVE_UP_SECONDS)
    reconciled = not_billed = retried = 0
    providers: dict[int, ChatProvider | LLMError] = {}
    for call in reconcilable_calls(now):
        configuration = call.configuration
        if configuration.pk not in providers:
            try:
                providers[configuration.pk] = provider_for(configuration)
            except LLMError as error:  # its key cannot be used now: asked again later
                providers[configuration.pk] = error
        provider = providers[configuration.pk]
        try:
            if isinstance(provider, LLMError):
                raise provider
            found = provider.stored_usage({STORE_KEY: call.parameters["metadata"][STORE_KEY]})
        except Exception as error:  # noqa: BLE001 - whatever the client raises: asked again later
            _pending(call, now, error=f"{type(error).__name__}: {error}"[:1000])
            retried += 1
            continue
        if found is not None:
            _reconciled(call, found, now)
            reconciled += 1
        elif call.created_at <= give_up:
            _settle(call, now, state=ReconcileState.NOT_BILLED)
            not_billed += 1
        else:
            _pending(call, now, error="")
            retried += 1
    report = ReconcileReport(reconciled=reconciled, not_billed=not_billed, retried=retried)
    if reconciled or not_billed:
        logger.info("Attempts of unknown outcome settled with the provider: %s", report)
    return report


def _reconciled(call: LLMCall, found: StoredCompletion, now: datetime) -> None:
    usage = found.usage
    cost = call.configuration.cost_estimate(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    with transaction.atomic():
        # Conditional on the outcome: a row the engine has since written with its reply (a
        # replay racing the recorder) keeps what it recorded.
        LLMCall.objects.filter(pk=call.pk, outcome=CallOutcome.UNKNOWN).update(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_prompt_tokens=usage.cached_prompt_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cost_estimate=cost,
        )
        _settle(call, now, state=ReconcileState.RECONCILED, completion_id=found.id)


def _settle(call: LLMCall, now: datetime, *, state: str, completion_id: str = "") -> None:
    CallReconciliation.objects.update_or_create(
        call=call,
        defaults={
            "state": state,
            "checked_at": now,
            "completion_id": completion_id[:100],
            "error": "",
        },
    )


def _pending(call: LLMCall, now: datetime, *, error: str) -> None:
    row, _created = CallReconciliation.objects.get_or_create(call=call)
    if row.state in SETTLED_STATES:
        return
    row.tries += 1
    row.checked_at = now
    row.error = error
    row.save(update_fields=["tries", "checked_at", "error"])
