"""Swap studies of an official run in the public API: what was swapped, and per polarity each
model's pass-rate shift, rank agreement, flipped verdicts and single-vs-majority agreement."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..selectors import public_run
from ..services.swap_study import HELD_RULE, VERDICTS, swap_verdict_text
from .serializers import EstimateOutput
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin


class SwapModelOutput(serializers.Serializer):
    target = serializers.IntegerField(help_text="The model configuration's id.")
    model = serializers.CharField()
    base_rate = serializers.FloatField(allow_null=True)
    swap_rate = serializers.FloatField(allow_null=True)
    base_grade = serializers.CharField()
    swap_grade = serializers.CharField()
    shift = EstimateOutput(help_text="Swap minus original pass rate, paired by base scenario.")
    held = serializers.BooleanField(
        allow_null=True,
        help_text=f"{HELD_RULE} True: held; false: the grade moved; null: the grade is "
        "unchanged but the interval admits a move of a full band, or there is no interval.",
    )
    verdict = serializers.ChoiceField(
        choices=["", *VERDICTS],
        default="",
        help_text="What the line says of the grade, as a code (blank: computed under an "
        "earlier rule, until the next refresh).",
    )
    verdict_text = serializers.SerializerMethodField(help_text="The verdict in words.")

    def get_verdict_text(self, line: dict) -> str:
        return swap_verdict_text(line)


class SingleVsMajorityOutput(serializers.Serializer):
    base = EstimateOutput()
    swap = EstimateOutput()


class SwapPolarityOutput(serializers.Serializer):
    models = SwapModelOutput(many=True)
    rank_agreement = EstimateOutput(help_text="Kendall's tau-b between the two rankings.")
    flip_share = EstimateOutput(help_text="Share of paired verdicts that differ.")
    single_vs_majority = SingleVsMajorityOutput()


class SwapStudyOutput(serializers.Serializer):
    study = serializers.IntegerField()
    swapped = serializers.ChoiceField(choices=["judge", "simulator", "both"])
    base_judge = serializers.CharField()
    swap_judge = serializers.CharField()
    base_simulator = serializers.CharField()
    swap_simulator = serializers.CharField()
    rejudged = serializers.BooleanField(help_text="The same conversations judged again.")
    synthetic = serializers.BooleanField(
        default=False, help_text="Synthetic data (a load-test release's planted study)."
    )
    sample_size = serializers.IntegerField()
    seed = serializers.IntegerField()
    held_rule = serializers.SerializerMethodField()

    def get_held_rule(self, study: dict) -> str:
        # The rule in force, in the reader's language (a study stored earlier holds its own).
        return str(HELD_RULE)

    polarities = serializers.DictField(child=SwapPolarityOutput())


class RunSwapStudiesOutput(serializers.Serializer):
    run = serializers.IntegerField()
    studies = SwapStudyOutput(many=True)


@extend_schema(
    parameters=[ID_PATH],
    summary="Swap studies of an official run: do the grades hold with another judge or simulator",
    responses={200: RunSwapStudiesOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunSwapStudiesApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, pk: int):
        run = public_run(pk, with_analysis=True)
        if run is None:
            raise NotFound("No published results for this run.")
        analysis = getattr(run, "analysis", None)
        studies = analysis.robustness.get("swap", []) if analysis else []
        return Response(RunSwapStudiesOutput({"run": run.pk, "studies": studies}).data)
