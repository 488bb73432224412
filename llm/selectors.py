"""Reads: which configuration fills a role, usage figures, the call log."""

from datetime import datetime

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from core.exceptions import ApplicationError

from .models import (
    ERROR_OUTCOMES,
    CallOutcome,
    LLMCall,
    ModelConfiguration,
    ModelRole,
    ModelRoleAssignment,
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
            f"No model is configured for the {label} role; a maintainer can assign one under "
            "Model configurations."
        )
    if not assignment.configuration.is_active:
        raise ApplicationError(
            f"The default model for the {label} role ({assignment.configuration.name}) is "
            "switched off; a maintainer can activate it or choose another under Model "
            "configurations."
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
