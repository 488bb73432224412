"""The label of a model and the run's calibrated pass rates in the public results API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..label import label_profile
from ..selectors import public_run, run_target
from ..services.calibration import run_calibration
from ..services.calibration_pages import label_calibration_reason
from ..services.judge_trust import gap_api, target_self_preference, target_trust_and_gap, trust_api
from .label_serializers import LabelOutput, RunCalibrationOutput
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, RUN_PARAM, PublishedMixin


@extend_schema(
    parameters=[ID_PATH],
    summary="Judge-only and expert-calibrated pass rates of an official run, per target",
    responses={200: RunCalibrationOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunCalibrationApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, pk: int):
        run = public_run(pk)
        if run is None:
            raise NotFound("No published results for this run.")
        data = {"run": run.pk, **run_calibration(run).as_api()}
        return Response(RunCalibrationOutput(data).data)


@extend_schema(
    summary="The AI Nutrition Label of a model: grade and estimate per label category",
    parameters=[ID_PATH, RUN_PARAM],
    responses={200: LabelOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class LabelApi(PublishedMixin, APIView):
    def get(self, request, pk: int):
        run = self.get_run()
        target = run_target(run, pk)
        if target is None:
            raise NotFound("This model is not part of the published results.")
        p = label_profile(run=run, target=target)
        trust, gap = target_trust_and_gap(run, target)
        calibration = run_calibration(run)
        rate = calibration.for_target(target.pk)
        data = {
            "run": run.pk,
            "release": run.release.version,
            "target": target.pk,
            "target_name": target.name,
            "n_metrics": p.n_metrics,
            "n_conversations": p.n_conversations,
            "teen_conversations": p.teen,
            "adult_conversations": p.adult,
            "judge_self_preference": target_self_preference(run, target),
            "judge_agreement_gap": gap_api(gap),
            "strengths": p.strengths,
            "weaknesses": p.weaknesses,
            "calibration": rate.as_api() if rate is not None else None,
            "calibration_reason": label_calibration_reason(calibration, rate),
            "lines": [
                {
                    "category": line.category.slug,
                    "category_name": line.category.name,
                    "polarity": line.category.polarity,
                    "grade": line.grade,
                    "thin_evidence": line.thin,
                    "n_metrics": line.n_metrics,
                    "estimate": line.estimate,
                    "judge_trust": trust_api(trust.get(line.category.slug)),
                }
                for line in p.lines
            ],
        }
        return Response(LabelOutput(data).data)
