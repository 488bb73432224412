"""A whole official rubric run's graded replies: JSON Lines in simple-evals' HealthBench result
shape, or CSV with one row per criterion; streamed, with an ETag."""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.http import HttpResponseNotModified, StreamingHttpResponse
from django.utils.cache import patch_cache_control
from django.utils.http import parse_etags
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView

from core.csvsafe import csv_dict_lines

from ..rubrics import public_rubric_responses, public_rubric_run
from .rubrics import response_record
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin

MAX_AGE = 300


def healthbench_result(record: dict) -> dict:
    """One graded reply in simple-evals' HealthBench result shape (its example-level metadata:
    prompt, completion, score, rubric items with criteria_met and explanation), with the
    platform's own fields beside it. Only counted criteria are HealthBench's rubric items; the
    excluded ones are listed apart with the reason."""
    counted = [c for c in record["criteria"] if c["counted"]]
    return {
        "prompt_id": record["item"],
        "prompt": record["prompt"],
        "completion": [{"role": "assistant", "content": record["reply"]}],
        "score": record["score"],
        "rubric_items": [
            {
                "criterion": c["criterion"],
                "points": c["points"],
                "tags": c["tags"],
                "criteria_met": c["criteria_met"],
                "explanation": c["explanation"],
            }
            for c in counted
        ],
        "example_tags": [
            tag
            for tag in (
                f"acuity:{record['acuity']}" if record["acuity"] else "",
                f"population:{record['population']}" if record["population"] else "",
                f"language:{record['language']}",
            )
            if tag
        ],
        "impactbench": {
            "response_id": record["id"],
            "run": record["run"],
            "release": record["release"],
            "model": record["model"],
            "offline_demo": record["offline_demo"],
            "demo_material": record["demo_material"],
            "status": record["status"],
            "excluded_criteria": [
                {"criterion": c["criterion"], "points": c["points"], "why": c["why"]}
                for c in record["criteria"]
                if not c["counted"]
            ],
        },
    }


CSV_FIELDS = [
    "response_id",
    "item",
    "acuity",
    "population",
    "model",
    "status",
    "item_score",
    "criterion",
    "points",
    "dimension",
    "criteria_met",
    "counted",
    "why",
    "explanation",
]


def _records(run) -> Iterator[dict]:
    for row in public_rubric_responses(run):
        yield response_record(row.response)


def _csv_rows(run) -> Iterator[dict]:
    for record in _records(run):
        for c in record["criteria"]:
            yield {
                "response_id": record["id"],
                "item": record["item"],
                "acuity": record["acuity"],
                "population": record["population"],
                "model": record["model"],
                "status": record["status"],
                "item_score": record["score"],
                "criterion": c["criterion"],
                "points": c["points"],
                "dimension": c["dimension"],
                "criteria_met": c["criteria_met"],
                "counted": c["counted"],
                "why": c["why"],
                "explanation": c["explanation"],
            }


@extend_schema(
    parameters=[ID_PATH],
    summary="A rubric run's graded replies: JSONL in HealthBench's result shape, or CSV",
    responses={
        (200, "application/jsonl"): str,
        (200, "text/csv"): str,
        400: BAD_REQUEST,
        404: NOT_FOUND,
    },
)
class RubricRunExportApi(PublishedMixin, APIView):
    def get(self, request, pk: int, fmt: str):
        run = public_rubric_run(pk)
        if run is None or fmt not in ("jsonl", "csv"):
            raise NotFound("No published rubric results for this run in this format.")
        finished = run.finished_at.timestamp() if run.finished_at else 0
        etag = f'"rubric-run{run.pk}-{finished:.0f}-{fmt}"'
        if etag in parse_etags(request.headers.get("If-None-Match", "")):
            response = HttpResponseNotModified()
        else:
            if fmt == "jsonl":
                body = (
                    json.dumps(healthbench_result(r), ensure_ascii=False) + "\n"
                    for r in _records(run)
                )
                content_type = "application/jsonl; charset=utf-8"
            else:
                body = csv_dict_lines(CSV_FIELDS, _csv_rows(run))
                content_type = "text/csv; charset=utf-8"
            response = StreamingHttpResponse(body, content_type=content_type)
            name = f"impactbench-{run.release.version}-run{run.pk}-rubric.{fmt}"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        # A completed official run's grades do not change; its frozen rubric neither.
        response["ETag"] = etag
        patch_cache_control(response, public=True, max_age=MAX_AGE)
        return response
