"""Public API answers for how far the simulated conversations and the judge's evidence hold:
the published anchor study, and a run's evidence re-ask figures. Both read figures computed
ahead (the study's on publishing, the re-asks' with the run's analysis)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..selectors import public_run, published_anchor_study
from .serializers import EstimateOutput
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin


class ReaskFlipOutput(serializers.Serializer):
    polarity = serializers.ChoiceField(choices=["positive", "negative"])
    flip_rate = EstimateOutput(help_text="Share of re-asked readings whose verdict changed.")
    to_absent = serializers.IntegerField(help_text="Re-asks that turned present into absent.")
    to_present = serializers.IntegerField(help_text="Re-asks that turned absent into present.")


class RunReasksOutput(serializers.Serializer):
    """What re-asking the judge for its evidence did to verdicts, per metric polarity."""

    run = serializers.IntegerField()
    available = serializers.BooleanField()
    reason = serializers.CharField(required=False)
    flips = ReaskFlipOutput(many=True, required=False)
    present_all = EstimateOutput(
        required=False, help_text="Share of all readings saying the behaviour is present."
    )
    present_verified_only = EstimateOutput(
        required=False,
        help_text="The same share after dropping every reading whose quotes stayed unverified.",
    )


@extend_schema(
    parameters=[ID_PATH],
    summary="Evidence re-asks of an official run: verdict flip rate by polarity, and the "
    "share of readings saying present with and without unverified readings",
    responses={200: RunReasksOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunReasksApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, pk: int):
        run = public_run(pk, with_analysis=True)
        if run is None:
            raise NotFound("No published results for this run.")
        reasks = run.analysis.reliability.get("evidence", {}).get("reasks")
        if not reasks:
            answer = {"run": run.pk, "available": False, "reason": "Not computed for this run."}
        else:
            answer = {"run": run.pk, "available": True, **reasks}
        return Response(RunReasksOutput(answer).data)


class RunDisagreementOutput(serializers.Serializer):
    run = serializers.IntegerField()
    name = serializers.CharField()
    use_anchors = serializers.BooleanField()
    disagreement = EstimateOutput(
        required=False,
        help_text="Share of anchors raised in some replicates of a scenario and model only.",
    )
    n_unverified = serializers.IntegerField(
        required=False, help_text="Readings saying raised without a verified quote."
    )
    reason = serializers.CharField(required=False)


class PairedOutput(serializers.Serializer):
    difference = EstimateOutput(help_text="Disagreement with anchors minus without, paired.")
    rate_with = serializers.FloatField(required=False)
    rate_without = serializers.FloatField(required=False)
    n_base_scenarios = serializers.IntegerField(required=False)
    n_scenarios = serializers.IntegerField(required=False)


class AnchorStudyOutput(serializers.Serializer):
    """A published anchor study: the same scenarios simulated with and without anchors."""

    id = serializers.IntegerField()
    release = serializers.CharField(help_text="The release whose metric versions it used.")
    published_at = serializers.DateTimeField()
    with_anchors = RunDisagreementOutput()
    without_anchors = RunDisagreementOutput()
    paired = PairedOutput()
    checker_noise = EstimateOutput(
        help_text="Share of anchors whose two independent checks of a conversation differ."
    )
    n_unverified = serializers.IntegerField(
        help_text="Readings of both runs saying raised without a verified quote (not raised)."
    )


def _side(run, figures: dict) -> dict:
    return {"run": run.pk, "name": run.name, **figures}


@extend_schema(
    summary="The published anchor study (default the newest): paired difference of anchor "
    "disagreement with and without anchors, and the anchor checker's own noise",
    parameters=[OpenApiParameter("study", int, required=False, description="A study id.")],
    responses={200: AnchorStudyOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class AnchorStudyApi(PublishedMixin, APIView):
    page_cache_params = ("study",)

    def get(self, request):
        asked = request.query_params.get("study", "")
        study = published_anchor_study(asked)
        if study is None:
            raise NotFound(
                "No published anchor study with this id." if asked else "No anchor study yet."
            )
        figures = study.figures
        answer = {
            "id": study.pk,
            "release": study.release.version,
            "published_at": study.published_at,
            "with_anchors": _side(study.with_anchors, figures["with_anchors"]),
            "without_anchors": _side(study.without_anchors, figures["without_anchors"]),
            "paired": figures["paired"],
            "checker_noise": figures["checker_noise"],
            "n_unverified": figures["n_unverified"],
        }
        return Response(AnchorStudyOutput(answer).data)
