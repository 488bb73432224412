"""A whole official run's results as JSON Lines or CSV, streamed."""

import json
from collections.abc import Iterator

from django.http import StreamingHttpResponse
from django.utils.cache import patch_cache_control
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView

from core.csvsafe import csv_dict_lines

from ..selectors import public_run, run_summary_rows
from . import serializers as s
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin

MAX_AGE = 300


def _export_rows(run) -> Iterator[dict]:
    for row in run_summary_rows(run=run).iterator(chunk_size=2000):
        data = s.ResultOutput(row).data
        estimate = data.pop("estimate")
        yield {
            **data,
            **{f"estimate_{k}": v for k, v in estimate.items() if k != "excluded"},
            "excluded": json.dumps(estimate["excluded"]),
        }


EXPORT_FIELDS = [
    "target",
    "target_name",
    "level",
    "polarity",
    "age_context",
    "area",
    "subarea",
    "metric",
    "metric_version",
    "n_passed",
    "estimate_value",
    "estimate_low",
    "estimate_high",
    "estimate_sd",
    "estimate_method",
    "estimate_confidence",
    "estimate_n",
    "estimate_n_clusters",
    "estimate_unit",
    "estimate_reason",
    "excluded",
]


@extend_schema(
    parameters=[ID_PATH],
    summary="A whole official run's results as JSON Lines (fmt=jsonl) or CSV (fmt=csv)",
    responses={
        (200, "application/jsonl"): str,
        (200, "text/csv"): str,
        400: BAD_REQUEST,
        404: NOT_FOUND,
    },
)
class RunExportApi(PublishedMixin, APIView):
    def get(self, request, pk: int, fmt: str):
        run = public_run(pk)
        if run is None or fmt not in ("jsonl", "csv"):
            raise NotFound("No published results for this run in this format.")
        if fmt == "jsonl":
            body = (json.dumps(row, ensure_ascii=False) + "\n" for row in _export_rows(run))
            content_type = "application/jsonl; charset=utf-8"
        else:
            body = csv_dict_lines(EXPORT_FIELDS, _export_rows(run))
            content_type = "text/csv; charset=utf-8"
        response = StreamingHttpResponse(body, content_type=content_type)
        name = f"impactbench-{run.release.version}-run{run.pk}-results.{fmt}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        # Published results change only when the run's summaries are recomputed.
        response["ETag"] = f'"run{run.pk}-{run.analysis.computed_at.timestamp():.0f}-{fmt}"'
        patch_cache_control(response, public=True, max_age=MAX_AGE)
        return response
