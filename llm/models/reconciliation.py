"""What the provider's own records said about an attempt of unknown outcome (`llm.reconcile`).

Kept apart from the call log: a column with a default on `llm_llmcall` rebuilds that table on
SQLite and drops its usage triggers. The row's tokens and cost themselves are updated on the
`LLMCall` (so the run's running totals, kept by those triggers, include them); this row says
that they came from the provider and when, or that the provider has no such completion.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from .calls import LLMCall


class ReconcileState(models.TextChoices):
    # Not found yet, or the provider could not be asked: asked again later.
    PENDING = "pending", _("Not reconciled yet")
    # The provider kept the completion: its tokens and cost are on the call-log row.
    RECONCILED = "reconciled", _("Reconciled with the provider's records")
    # The provider holds no completion for it after the give-up age: never answered, not billed.
    NOT_BILLED = "not_billed", _("Not billed (never answered)")
    # Every recent lookup failed (unreachable, key refused) past the give-up age: no longer
    # asked, and what the provider billed stays unknown (the run's cost a lower bound).
    LOOKUP_FAILED = (
        "lookup_failed",
        _("Could not be reconciled: the provider could not be asked"),
    )


# No longer looked up.
SETTLED_STATES = (
    ReconcileState.RECONCILED,
    ReconcileState.NOT_BILLED,
    ReconcileState.LOOKUP_FAILED,
)
# Settled with what the provider billed known: its tokens and cost on the row, or nothing. A
# row that could not be reconciled is settled but not among them: its bill is still unknown.
BILL_KNOWN_STATES = (ReconcileState.RECONCILED, ReconcileState.NOT_BILLED)


class CallReconciliation(models.Model):
    """The provider's answer about one attempt of unknown outcome."""

    call = models.OneToOneField(
        LLMCall, on_delete=models.CASCADE, primary_key=True, related_name="reconciliation"
    )
    state = models.CharField(
        max_length=16, choices=ReconcileState.choices, default=ReconcileState.PENDING
    )
    tries = models.PositiveIntegerField(default=0)
    # Lookups in a row that failed (an answer, even "not found", resets it): the back-off's
    # exponent, and what gives up on a provider that cannot be asked.
    failures = models.PositiveIntegerField(default=0)
    checked_at = models.DateTimeField(null=True, blank=True)
    # When a pending row is due for its next lookup (None once settled).
    next_check_at = models.DateTimeField(null=True, blank=True)
    # The provider's id of the completion found ("chatcmpl-…").
    completion_id = models.CharField(max_length=100, blank=True)
    # Why the last lookup failed (the provider unreachable, an error it answered).
    error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "next_check_at"], name="llm_reconcile_due")]

    def __str__(self) -> str:
        return f"call {self.call_id}: {self.state}"
