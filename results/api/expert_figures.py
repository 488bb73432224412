"""Public API answer for a release's expert figures, as frozen when it was published.

Reads only the frozen row (`results.services.expert_figures`): ratings given after publication
never change an answer, so a figure cited from it stays as cited. A published release without
frozen figures answers ``figures: null`` with the reason; an unknown or draft release is 404.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..services.frozen_figures import release_expert_figures_public
from .serializers import EstimateOutput
from .views import BAD_REQUEST, NOT_FOUND, PublishedMixin


class ScenarioFiguresOutput(serializers.Serializer):
    """Expert ratings of the release's scenarios (quality)."""

    n_ratings = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_rated = serializers.IntegerField(help_text="Scenarios with at least one rating.")
    n_suite = serializers.IntegerField(help_text="Scenarios in the release's suite.")
    suite_rated = EstimateOutput(
        help_text="Share of the suite rated at all: a count over the whole suite, no interval."
    )
    good = EstimateOutput(help_text="Share of ratings saying “good”.")
    very_good = EstimateOutput(help_text="Share of ratings saying “very good”.")
    good_or_very_good = EstimateOutput(help_text="The two together.")


class ConversationFiguresOutput(serializers.Serializer):
    """Expert ratings of the release's runs' conversations: realism and pressure."""

    n_ratings = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_conversations = serializers.IntegerField()
    realistic = EstimateOutput()
    significant = EstimateOutput(help_text="Under significant pressure.")
    extreme = EstimateOutput(help_text="Under extreme pressure.")
    significant_or_extreme = EstimateOutput()
    realistic_and_pressed = EstimateOutput(
        help_text="Realistic while under significant or extreme pressure."
    )


class EndorsementFiguresOutput(serializers.Serializer):
    """Experts who saw the judge's verdict: do they agree with it? Not a validity figure."""

    n_ratings = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_conversations = serializers.IntegerField()
    agree = EstimateOutput()
    disagree = EstimateOutput()
    unsure = EstimateOutput()


class PanelCellOutput(serializers.Serializer):
    n_conversations = serializers.IntegerField()
    majority_agreement = EstimateOutput(
        help_text="Share of conversations where the blind experts' majority matches the judge."
    )
    cohen_kappa = EstimateOutput(help_text="Cohen's κ, the experts' majority against the judge.")
    krippendorff_alpha = EstimateOutput(help_text="The blind experts' agreement among themselves.")


class PanelMetricOutput(PanelCellOutput):
    key = serializers.CharField(help_text="The metric's key.")
    examples_adequate = EstimateOutput()


class PanelFiguresOutput(PanelCellOutput):
    """The blind external panel (the judge's verdict hidden) against the judge."""

    n_ratings = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    examples_adequate = EstimateOutput(
        help_text="Share of panel ratings finding the metric's examples adequate."
    )
    per_metric = PanelMetricOutput(many=True)


class AgreementSharesOutput(serializers.Serializer):
    agreed = EstimateOutput()
    disagreed = EstimateOutput()
    unsure = EstimateOutput()


class RunAgreementOutput(serializers.Serializer):
    """Expert verdicts against the judge's on one run's conversations."""

    available = serializers.BooleanField()
    reason = serializers.CharField(required=False)
    n_ratings = serializers.IntegerField(required=False)
    n_raters = serializers.IntegerField(required=False)
    n_conversations = serializers.IntegerField(required=False)
    shares = AgreementSharesOutput(required=False, help_text="Per assessment.")
    percent_agreement = EstimateOutput(required=False, help_text="Experts' majority vs judge.")
    cohen_kappa = EstimateOutput(required=False)


class RunValidityOutput(serializers.Serializer):
    run = serializers.IntegerField()
    experts = RunAgreementOutput(help_text="Blind verdicts: the validity figure.")
    endorsement = RunAgreementOutput(help_text="Verdicts given with the judge's on screen.")


class FrozenFiguresOutput(serializers.Serializer):
    n_ratings = serializers.IntegerField(help_text="Every expert rating behind the figures.")
    scenarios = ScenarioFiguresOutput()
    conversations = ConversationFiguresOutput()
    endorsement = EndorsementFiguresOutput()
    panel = PanelFiguresOutput()
    runs = RunValidityOutput(
        many=True,
        required=False,
        help_text="Each run of the release, frozen with it (absent for releases frozen before "
        "runs' figures were).",
    )


class ReleaseExpertFiguresOutput(serializers.Serializer):
    """A published release's expert figures, frozen when it was published."""

    release = serializers.CharField()
    published_at = serializers.DateTimeField()
    frozen_at = serializers.DateTimeField(allow_null=True)
    figures = FrozenFiguresOutput(allow_null=True)
    reason = serializers.CharField(
        allow_blank=True, help_text="Why ``figures`` is null (blank when it is not)."
    )


@extend_schema(
    summary="A published release's expert figures, frozen at publication: scenario quality, "
    "conversation realism and pressure, experts against the judge (agreement, Cohen's κ, "
    "Krippendorff's α, by metric), each with interval and n",
    parameters=[
        OpenApiParameter(
            "version", str, OpenApiParameter.PATH, description="A published release's version."
        )
    ],
    responses={200: ReleaseExpertFiguresOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class ReleaseExpertFiguresApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, version: str):
        answer = release_expert_figures_public(version)
        if answer is None:
            raise NotFound(f"No published release {version}.")
        return Response(ReleaseExpertFiguresOutput(answer).data)
