"""Simulator fidelity of an official run in the public API: per simulator, the share of
conversations meeting the bar and holding each criterion, the conversations below it, each
model's pass rate with and without them, and the experts' realism answers against the check.
Read from the run's stored analysis (`results.services.fidelity`): one query for the figures."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.models.fidelity import FidelityCriterion

from ..selectors import public_run
from ..services.fidelity import fidelity_published
from .serializers import EstimateOutput, ExclusionOutput
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin

# The enum's own choices, so the schema names the set once (`ENUM_NAME_OVERRIDES`).
CRITERIA = FidelityCriterion.choices


class FidelityCriterionOutput(serializers.Serializer):
    criterion = serializers.ChoiceField(choices=CRITERIA)
    held = EstimateOutput(help_text="Share of checked conversations where the criterion held.")


class BelowBarOutput(serializers.Serializer):
    conversation = serializers.IntegerField(help_text="The conversation's id (its page and API).")
    scenario = serializers.IntegerField()
    metric = serializers.CharField()
    situation = serializers.IntegerField(help_text="The base scenario's number, from 1.")
    age_context = serializers.CharField()
    target = serializers.CharField()
    repeated_lines = serializers.IntegerField(
        help_text="User turns repeating an earlier one word for word (counted, not judged)."
    )
    failed_criteria = serializers.ListField(child=serializers.ChoiceField(choices=CRITERIA))


class FidelitySensitivityOutput(serializers.Serializer):
    target_id = serializers.IntegerField()
    target = serializers.CharField()
    polarity = serializers.CharField()
    all_judged = EstimateOutput(help_text="Pass rate over every judged conversation.")
    meeting_bar = EstimateOutput(
        help_text="Pass rate over the judged conversations meeting the fidelity bar only."
    )
    left_out = serializers.IntegerField(help_text="Judged conversations left out of the second.")
    left_out_below_bar = serializers.IntegerField()
    left_out_not_checked = serializers.IntegerField()


class FidelitySimulatorOutput(serializers.Serializer):
    simulator_id = serializers.IntegerField()
    simulator = serializers.CharField()
    n_checked = serializers.IntegerField()
    n_below_bar = serializers.IntegerField()
    excluded = ExclusionOutput(many=True, help_text="Conversations not counted, and why.")
    meets_bar = EstimateOutput(help_text="Share of checked conversations meeting the bar.")
    criteria = FidelityCriterionOutput(many=True)
    below_bar = BelowBarOutput(many=True, help_text="Every conversation below the bar.")
    sensitivity = FidelitySensitivityOutput(many=True)


class FidelityAgreementOutput(serializers.Serializer):
    n_ratings = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    # Defaults for figures stored before the seeded panel was told apart.
    n_seeded_demo_ratings = serializers.IntegerField(
        default=0,
        help_text="Ratings by the demo's simulated panel (seeded stand-ins, not clinicians).",
    )
    seeded_demo = serializers.BooleanField(
        default=False,
        help_text="True when any rating comes from the demo's simulated panel, not clinicians.",
    )
    n_conversations = serializers.IntegerField(help_text="Conversations experts rated.")
    n_pairs = serializers.IntegerField(
        help_text="Conversations with both an expert majority and a fidelity reading."
    )
    excluded = ExclusionOutput(many=True)
    reason = serializers.CharField(allow_blank=True)
    agreement = EstimateOutput(
        help_text="Share where the check (met the bar) and the experts' majority (realistic) agree."
    )
    cohen_kappa = EstimateOutput()


class RunFidelityOutput(serializers.Serializer):
    """A run's simulator fidelity: how well the simulated users played their part."""

    run = serializers.IntegerField()
    available = serializers.BooleanField()
    reason = serializers.CharField(allow_blank=True)
    simulators = FidelitySimulatorOutput(many=True)
    agreement = FidelityAgreementOutput(allow_null=True)


@extend_schema(
    parameters=[ID_PATH],
    summary="Simulator fidelity of an official run: the bar, its criteria, and the pass rates "
    "with and without the conversations below it",
    responses={200: RunFidelityOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunFidelityApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, pk: int):
        run = public_run(pk)
        if run is None:
            raise NotFound("No published results for this run.")
        return Response(RunFidelityOutput({"run": run.pk, **fidelity_published(run)}).data)
