"""A whole official run's results as JSON Lines or CSV, streamed.

Every row says which language it counts: ``language`` is blank on the rows over every
language and then ``languages`` lists those they pool; ``?lang=`` (a run's language, or
"all", the default, for the pooled rows) chooses which rows are exported."""

import json
from collections.abc import Iterator

from django.http import StreamingHttpResponse
from django.utils.cache import patch_cache_control
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView

from core.csvsafe import csv_dict_lines

from ..selectors import public_run, run_language_analysis, run_summary_rows
from . import serializers as s
from .language_serializers import LANG_PARAM, language_param
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin

MAX_AGE = 300


def _export_rows(run, language: str) -> Iterator[dict]:
    # The pooled rows count every language the analysis found (one, for a run in one).
    pooled = run_language_analysis(run=run).get("languages") or []
    languages = language or " ".join(pooled)
    for row in run_summary_rows(run=run, language=language).iterator(chunk_size=2000):
        data = s.ResultOutput(row).data
        estimate = data.pop("estimate")
        yield {
            **data,
            "languages": languages,
            **{f"estimate_{k}": v for k, v in estimate.items() if k != "excluded"},
            "excluded": json.dumps(estimate["excluded"]),
        }


EXPORT_FIELDS = [
    "target",
    "target_name",
    "level",
    "polarity",
    "age_context",
    "language",
    "languages",
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
    parameters=[ID_PATH, LANG_PARAM],
    summary="A whole official run's results as JSON Lines (fmt=jsonl) or CSV (fmt=csv): the "
    "rows over every language pooled, or with lang those of one language",
    responses={
        (200, "application/jsonl"): str,
        (200, "text/csv"): str,
        400: BAD_REQUEST,
        404: NOT_FOUND,
    },
)
class RunExportApi(PublishedMixin, APIView):
    page_cache_params = ("run", "lang")

    def get(self, request, pk: int, fmt: str):
        run = public_run(pk)
        if run is None or fmt not in ("jsonl", "csv"):
            raise NotFound("No published results for this run in this format.")
        language = language_param(request.query_params, run).summary_language
        rows = _export_rows(run, language)
        if fmt == "jsonl":
            body = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            content_type = "application/jsonl; charset=utf-8"
        else:
            body = csv_dict_lines(EXPORT_FIELDS, rows)
            content_type = "text/csv; charset=utf-8"
        response = StreamingHttpResponse(body, content_type=content_type)
        scope = f"-{language}" if language else ""
        name = f"impactbench-{run.release.version}-run{run.pk}{scope}-results.{fmt}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        # Published results change only when the run's summaries are recomputed.
        computed = f"{run.analysis.computed_at.timestamp():.0f}"
        response["ETag"] = f'"run{run.pk}-{computed}-{language or "all"}-{fmt}"'
        patch_cache_control(response, public=True, max_age=MAX_AGE)
        return response
