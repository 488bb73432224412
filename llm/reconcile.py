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
- not found yet: asked again LLM_RECONCILE_AFTER_SECONDS later; still not found
  LLM_RECONCILE_GIVE_UP_SECONDS after it was restored: "not billed", never answered;
- the lookup failed (the provider unreachable, its key unset or refused, an error answered):
  never raised, asked again after a gap that doubles with each failure in a row (AFTER, 2 ×
  AFTER, 4 × AFTER, … at most MAX_GAP), so a dead key costs a few requests an hour, not a
  batch a minute. Once the row is past the give-up age and its last LOOKUP_FAILED_AFTER
  lookups all failed, it settles as "lookup failed" with its last error and a warning in the
  log: no longer asked, and what the provider billed for it stays unknown (the run's cost a
  lower bound, saying how many rows could not be reconciled).

Each sweep takes the rows never looked up first, then the pending ones longest due, so rows
whose lookups keep failing cannot take the batch from rows that could be settled.

Anthropic and Google keep no per-request records to ask, and a configuration without the
option sent no metadata: their rows of unknown outcome stay unknown, and the run's cost a lower
bound. Reconciling a row twice (two reapers) writes the same figures.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
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
# A row whose lookups keep failing is asked at most this far apart (reached only with a give-up
# age of many hours): a provider back after an outage is still noticed the same day, while a
# dead key costs each row four requests a day.
MAX_GAP = timedelta(hours=6)
# This many failed lookups in a row, past the give-up age, settle a row as "lookup failed". With
# the default pace the eighth failure comes about two hours after the first: long enough for an
# outage or a rotated key to be fixed.
LOOKUP_FAILED_AFTER = 8


@dataclass(frozen=True)
class ReconcileReport:
    reconciled: int = 0
    not_billed: int = 0
    retried: int = 0  # not found yet, or the provider could not be asked
    lookup_failed: int = 0  # gave up: the provider could not be asked for too long


def reconcilable_calls(now: datetime) -> "list[LLMCall]":
    """Rows of unknown outcome sent for the provider to keep, due for a lookup."""
    after = timedelta(seconds=settings.LLM_RECONCILE_AFTER_SECONDS)
    due = Q(reconciliation__isnull=True) | Q(
        reconciliation__state=ReconcileState.PENDING, reconciliation__next_check_at__lte=now
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
        .select_related("configuration", "reconciliation")
        # Never looked up first (no reconciliation: NULL), then the longest due: rows whose
        # lookups keep failing cannot starve the others.
        .order_by(F("reconciliation__next_check_at").asc(nulls_first=True), "created_at", "pk")[
            :RECONCILE_BATCH
        ]
    )


def calls_reconcile(*, now: datetime | None = None) -> ReconcileReport:
    """Look up the due rows of unknown outcome at their providers (see the module docstring)."""
    now = now or timezone.now()
    give_up = now - timedelta(seconds=settings.LLM_RECONCILE_GIVE_UP_SECONDS)
    reconciled = not_billed = retried = lookup_failed = 0
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
            if _failed(call, now, error=f"{type(error).__name__}: {error}"[:1000], give_up=give_up):
                lookup_failed += 1
            else:
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
    report = ReconcileReport(
        reconciled=reconciled, not_billed=not_billed, retried=retried, lookup_failed=lookup_failed
    )
    if reconciled or not_billed or lookup_failed:
        logger.info("Attempts of unknown outcome settled with the provider: %s", report)
    return report


def next_check_after(failures: int) -> timedelta:
    """How long a pending row waits for its next lookup after `failures` failed ones in a row:
    the plain pace after an answer ("not found yet"), doubling with each failure, at most
    MAX_GAP."""
    after = timedelta(seconds=settings.LLM_RECONCILE_AFTER_SECONDS)
    if failures <= 0:
        return after
    # The exponent is bounded so that a row failing for years cannot overflow the timedelta.
    return min(after * 2 ** min(failures - 1, 32), MAX_GAP)


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
            "next_check_at": None,
            "completion_id": completion_id[:100],
            "error": "",
        },
    )


def _pending_row(call: LLMCall) -> tuple[CallReconciliation, bool]:
    """The call's reconciliation, read with it (select_related), or a new one (True)."""
    row = getattr(call, "reconciliation", None)
    return (row, False) if row is not None else (CallReconciliation(call=call), True)


def _write(row: CallReconciliation, *, new: bool, fields: list[str]) -> None:
    if new:
        # One INSERT per row on its first lookup, the most common write of a sweep; a row that
        # another reaper wrote meanwhile keeps what it wrote.
        CallReconciliation.objects.bulk_create([row], ignore_conflicts=True)
    else:
        row.save(update_fields=fields)


def _pending(call: LLMCall, now: datetime, *, error: str) -> None:
    row, new = _pending_row(call)
    _retry_later(row, new=new, now=now, error=error)


def _retry_later(row: CallReconciliation, *, new: bool, now: datetime, error: str) -> None:
    """One more lookup that did not settle the row: failed (`error`) or not found yet."""
    if row.state in SETTLED_STATES:
        return
    row.tries += 1
    row.failures = row.failures + 1 if error else 0
    row.checked_at = now
    row.next_check_at = now + next_check_after(row.failures)
    row.error = error
    _write(row, new=new, fields=["tries", "failures", "checked_at", "next_check_at", "error"])


def _failed(call: LLMCall, now: datetime, *, error: str, give_up: datetime) -> bool:
    """A failed lookup: asked again later, or settled as "lookup failed" (True) once the row
    is past the give-up age and its last LOOKUP_FAILED_AFTER lookups all failed."""
    row, new = _pending_row(call)
    exhausted = row.failures + 1 >= LOOKUP_FAILED_AFTER and call.created_at <= give_up
    if not exhausted or row.state in SETTLED_STATES:
        _retry_later(row, new=new, now=now, error=error)
        return False
    row.state = ReconcileState.LOOKUP_FAILED
    row.tries += 1
    row.failures += 1
    row.checked_at = now
    row.next_check_at = None
    row.error = error  # kept: why it could not be reconciled
    fields = ["state", "tries", "failures", "checked_at", "next_check_at", "error"]
    _write(row, new=new, fields=fields)
    configuration = call.configuration
    logger.warning(
        "Attempt %s of unknown outcome could not be reconciled: the last %s lookups at the "
        "provider of configuration %r (id %s, %s, %s) failed, and it was restored %s ago. It is "
        "no longer looked up, and what the provider billed for it stays unknown (its run's cost "
        "is a lower bound). Last error: %s",
        call.pk,
        row.failures,
        configuration.name,
        configuration.pk,
        configuration.provider,
        configuration.endpoint,
        now - call.created_at,
        error,
    )
    return True
