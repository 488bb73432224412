"""Output shapes of an official run's cost (`results.services.run_cost`), as stored with its
analysis: amounts in dollars as decimal strings, null where the price is unknown."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ..services.run_cost import COST_STATUSES

STATUS_HELP = (
    "known: every call was priced; lower_bound: some calls were made with a configuration "
    "that gives no prices, or some attempts' outcome is unknown, so the cost is at least this; "
    "unknown: no call was priced (cost is null, never $0)."
)


class CostFigureOutput(serializers.Serializer):
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(
        max_digits=20, decimal_places=8, allow_null=True, help_text="Dollars."
    )
    status = serializers.ChoiceField(list(COST_STATUSES), help_text=STATUS_HELP)
    unpriced_calls = serializers.IntegerField(
        help_text="Calls with tokens made with a configuration that gives no prices."
    )
    unknown_outcome_calls = serializers.IntegerField(
        default=0,
        help_text="Attempts sent whose worker stopped before their reply was read: the provider "
        "may have billed them; their cost is not in the total.",
    )
    reconciled_calls = serializers.IntegerField(
        default=0,
        help_text="Attempts whose reply was never read that the provider's own records settled: "
        "billed as the provider billed them (in the total), or never answered and not billed.",
    )
    lookup_failed_calls = serializers.IntegerField(
        default=0,
        help_text="Attempts whose reply was never read that could not be reconciled: the "
        "provider could not be asked about them for hours, so they are no longer looked up. "
        "Counted among unknown_outcome_calls too: their cost is not in the total.",
    )


class CostPerConversationOutput(CostFigureOutput):
    conversations = serializers.IntegerField()
    per_conversation = serializers.DecimalField(
        max_digits=20, decimal_places=8, allow_null=True, help_text="Dollars."
    )


class ModelCostOutput(CostFigureOutput):
    configuration = serializers.IntegerField()
    name = serializers.CharField()
    role = serializers.CharField()


class TargetCostOutput(CostPerConversationOutput):
    target = serializers.IntegerField()
    name = serializers.CharField()
    own = CostFigureOutput(help_text="The model's own calls.")
    overhead = CostFigureOutput(
        help_text="The user simulator's and the judge's calls for the model's conversations."
    )


class RunCostOutput(serializers.Serializer):
    total = CostPerConversationOutput()
    models = ModelCostOutput(many=True, help_text="Each model configuration in each role.")
    targets = TargetCostOutput(many=True)
    run_wide = CostFigureOutput(
        help_text="Calls made for the run as a whole rather than for one conversation."
    )


def run_cost_output(stored: dict) -> dict | None:
    """The stored figures as the API gives them; None before a refresh computed them."""
    if not stored or "total" not in stored:
        return None
    return RunCostOutput(stored).data


cost_field = extend_schema_field(RunCostOutput(allow_null=True))
