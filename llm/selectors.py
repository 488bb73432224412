"""Reads: which configuration fills a role, usage figures, the call log."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError

from .models import (
    BILL_KNOWN_STATES,
    COST_UNITS_PER_DOLLAR,
    ERROR_OUTCOMES,
    BatchRequest,
    BatchRequestStatus,
    BatchStatus,
    CallOutcome,
    LLMBatch,
    LLMCall,
    ModelConfiguration,
    ModelRole,
    ModelRoleAssignment,
    ReconcileState,
    RunUsageTotal,
)


def configuration_for_role(role: str) -> ModelConfiguration:
    """The active default configuration for `role`, or an ApplicationError saying what to do."""
    label = ModelRole(role).label.lower() if role in ModelRole.values else role
    assignment = (
        ModelRoleAssignment.objects.select_related("configuration")
        .filter(role=role, is_default=True)
        .first()
    )
    if assignment is None:
        raise ApplicationError(
            _(
                "No model is configured for the %(label)s role; a maintainer can "
                "assign one under Model configurations."
            )
            % {"label": label}
        )
    if not assignment.configuration.is_active:
        raise ApplicationError(
            _(
                "The default model for the %(label)s role "
                "(%(configuration_name)s) is switched off; a maintainer can "
                "activate it or choose another under Model configurations."
            )
            % {"label": label, "configuration_name": assignment.configuration.name}
        )
    return assignment.configuration


def configurations_for_role(role: str) -> QuerySet[ModelConfiguration]:
    """Every active configuration assigned to `role` (e.g. all target models of a run)."""
    return ModelConfiguration.objects.filter(is_active=True, role_assignments__role=role).order_by(
        "name"
    )


def configuration_list_with_usage(*, since: datetime) -> QuerySet[ModelConfiguration]:
    """Configurations with their role assignments and call figures since `since`."""
    recent = Q(calls__created_at__gte=since)
    paid = recent & ~Q(calls__outcome=CallOutcome.CACHED)
    return (
        ModelConfiguration.objects.prefetch_related("role_assignments")
        .annotate(
            recent_calls=Count("calls", filter=recent),
            recent_tokens=Coalesce(Sum("calls__prompt_tokens", filter=paid), 0)
            + Coalesce(Sum("calls__completion_tokens", filter=paid), 0),
            recent_cost=Sum("calls__cost_estimate", filter=recent),
            recent_errors=Count("calls", filter=recent & Q(calls__outcome__in=ERROR_OUTCOMES)),
        )
        .order_by("-is_active", "name")
    )


def llm_calls_of_run(
    *, run_id: int, work_item: str | None = None, configuration_id: int | None = None
) -> QuerySet[LLMCall]:
    """The call log of one evaluation run: of one of its items ("conversation:17") or of one
    configuration when given."""
    calls = LLMCall.objects.filter(run_id=run_id)
    if work_item is not None:
        calls = calls.filter(work_item=work_item)
    if configuration_id is not None:
        calls = calls.filter(configuration_id=configuration_id)
    return calls


def llm_call_configuration_id(call_id: int) -> int | None:
    """The configuration an attempt was made with (None if there is no such attempt)."""
    return LLMCall.objects.filter(pk=call_id).values_list("configuration_id", flat=True).first()


def llm_call_list(
    *, outcome: str | None = None, configuration_id: int | None = None
) -> QuerySet[LLMCall]:
    calls = LLMCall.objects.select_related("configuration").order_by("-created_at", "-id")
    if outcome:
        calls = calls.filter(outcome=outcome)
    if configuration_id:
        calls = calls.filter(configuration_id=configuration_id)
    return calls


_SUMMED = (
    "attempts",
    "successes",
    "failures",
    "cache_hits",
    "rate_limited",
    "prompt_tokens",
    "completion_tokens",
    "cost_units",
    "limit_wait_ms",
    "backoff_ms",
)


@dataclass(frozen=True)
class RunCallTotals:
    """A run's call log summed: every attempt, whatever became of it (`RunUsageTotal`)."""

    attempts: int = 0
    successes: int = 0
    failures: int = 0
    cache_hits: int = 0
    rate_limited: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    limit_wait_ms: int = 0
    backoff_ms: int = 0
    # When the backoff after the run's latest attempt that backed off ends (None: none did).
    latest_backoff_ends: datetime | None = None


def run_call_totals(*, run_id: int) -> RunCallTotals:
    """The run's usage from its running totals: one indexed read of at most `USAGE_SHARDS`
    rows, whatever the size of the call log."""
    rows = list(
        RunUsageTotal.objects.filter(run_id=run_id).values(
            *_SUMMED, "latest_backoff_id", "latest_backoff_at", "latest_backoff_ms"
        )
    )
    sums = {name: sum(row[name] for row in rows) for name in _SUMMED}
    units = sums.pop("cost_units")
    backed_off = [row for row in rows if row["latest_backoff_id"] is not None]
    ends = None
    if backed_off:
        latest = max(backed_off, key=lambda row: row["latest_backoff_id"])
        ends = latest["latest_backoff_at"] + timedelta(milliseconds=latest["latest_backoff_ms"])
    cost = (Decimal(units) / COST_UNITS_PER_DOLLAR).quantize(Decimal("1e-8"))
    return RunCallTotals(**sums, cost=cost, latest_backoff_ends=ends)


@dataclass(frozen=True)
class CallCost:
    """The cost of a run's attempts with one configuration, in one role, for one work item
    ("conversation:17"; "" for calls made for the run as a whole)."""

    configuration_id: int
    role: str
    work_item: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal
    # Billed attempts (tokens, not a cache hit, not offline) of a configuration without
    # prices: their cost is not in `cost`, which is then a lower bound.
    unpriced_calls: int
    # Attempts sent whose worker stopped before their reply was read (outcome "unknown"): the
    # provider may have billed them, and what it billed cannot be known here.
    unknown_outcome_calls: int = 0
    # Attempts of unknown outcome the provider's records settled (`llm.reconcile`): billed as
    # it billed them, or not billed. No longer unknown, they leave the figure exact.
    reconciled_calls: int = 0
    # Attempts of unknown outcome whose provider could not be asked, given up ("lookup
    # failed"): still among `unknown_outcome_calls`, the figure stays a lower bound.
    lookup_failed_calls: int = 0


def run_call_costs(*, run_id: int) -> list[CallCost]:
    """The run's call log summed per configuration, role and work item: one GROUP BY."""
    unpriced = (
        Q(configuration__price_per_million_input_tokens=0)
        & Q(configuration__price_per_million_output_tokens=0)
        & Q(is_offline=False)
        & ~Q(outcome=CallOutcome.CACHED)
        & (Q(prompt_tokens__gt=0) | Q(completion_tokens__gt=0))
    )
    unknown = Q(outcome=CallOutcome.UNKNOWN, is_offline=False)
    # Settled with its bill known; a row that could not be reconciled is still unknown.
    settled = Q(reconciliation__state__in=BILL_KNOWN_STATES)
    lookup_failed = Q(reconciliation__state=ReconcileState.LOOKUP_FAILED)
    rows = (
        LLMCall.objects.filter(run_id=run_id)
        .values("configuration_id", "role", "work_item")
        .annotate(
            calls=Count("id"),
            prompt=Coalesce(Sum("prompt_tokens"), 0),
            completion=Coalesce(Sum("completion_tokens"), 0),
            spent=Coalesce(Sum("cost_estimate"), Decimal(0)),
            unpriced=Count("id", filter=unpriced),
            unknown=Count("id", filter=unknown & ~settled),
            reconciled=Count("id", filter=unknown & settled),
            lookup_failed=Count("id", filter=unknown & lookup_failed),
        )
        .order_by("configuration_id", "role", "work_item")
    )
    return [
        CallCost(
            configuration_id=row["configuration_id"],
            role=row["role"],
            work_item=row["work_item"],
            calls=row["calls"],
            prompt_tokens=row["prompt"],
            completion_tokens=row["completion"],
            cost=Decimal(row["spent"]),
            unpriced_calls=row["unpriced"],
            unknown_outcome_calls=row["unknown"],
            reconciled_calls=row["reconciled"],
            lookup_failed_calls=row["lookup_failed"],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class UnknownOutcomes:
    """A run's attempts of unknown outcome and what the providers' records said of them."""

    unknown: int = 0  # all of them, settled or not
    reconciled: int = 0  # the provider billed them: its tokens and cost are on the rows
    not_billed: int = 0  # the provider never answered them
    lookup_failed: int = 0  # the provider could not be asked, given up: their bill unknown
    settled_read: bool = True  # False: only `unknown` was read (a live run's page)

    @property
    def unsettled(self) -> int:
        """Still being looked up."""
        return self.unknown - self.reconciled - self.not_billed - self.lookup_failed


def run_unknown_outcomes(*, run_id: int) -> UnknownOutcomes:
    """One query on the run's index by outcome (rows of unknown outcome are few)."""
    counts = LLMCall.objects.filter(run_id=run_id, outcome=CallOutcome.UNKNOWN).aggregate(
        unknown=Count("id"),
        reconciled=Count("id", filter=Q(reconciliation__state=ReconcileState.RECONCILED)),
        not_billed=Count("id", filter=Q(reconciliation__state=ReconcileState.NOT_BILLED)),
        lookup_failed=Count("id", filter=Q(reconciliation__state=ReconcileState.LOOKUP_FAILED)),
    )
    return UnknownOutcomes(**counts)


@dataclass(frozen=True)
class RunBatches:
    """A run's requests in providers' batches that are not answered yet, for its live page."""

    unsent: int  # recorded, waiting for the reaper to put them in a batch
    batches: Sequence[LLMBatch]  # at the provider (or being sent): each with `run_requests`

    @property
    def pending(self) -> bool:
        return bool(self.unsent or self.batches)


def run_batches_pending(*, run_id: int) -> RunBatches:
    requests = BatchRequest.objects.filter(run_id=run_id)
    unsent = requests.filter(status=BatchRequestStatus.PENDING).count()
    batches = list(
        LLMBatch.objects.filter(
            status__in=[BatchStatus.SUBMITTING, BatchStatus.SUBMITTED], requests__run_id=run_id
        )
        .select_related("configuration")
        .annotate(run_requests=Count("requests"))
        .order_by("created_at")
    )
    return RunBatches(unsent=unsent, batches=batches)
