"""Public rubric results in the API: runs, every figure of a run, the replies behind a figure,
one graded reply, users against clinicians, and a whole run's graded replies as JSONL
(HealthBench's result shape) or CSV. Same rules as the rest: anonymous, official runs only,
ETags and Cache-Control."""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.http import HttpResponseNotModified, StreamingHttpResponse
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.http import parse_etags
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.csvsafe import csv_dict_lines
from rubrics.dimensions import dimension_labels
from rubrics.models import Acuity, Population, RubricResponse

from ..rubric_priorities import rubric_priorities
from ..rubrics import (
    SECTIONS,
    WHAT_THEY_ARE,
    WHAT_THEY_ARE_NOT,
    public_rubric_response,
    public_rubric_responses,
    public_rubric_run,
    public_rubric_runs,
    rubric_response_criteria,
    rubric_results,
)
from .serializers import EstimateOutput
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin

MAX_AGE = 300


class RubricRunBriefOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    release = serializers.CharField(source="release.version")
    finished_at = serializers.DateTimeField(allow_null=True)


class RubricFigureOutput(serializers.Serializer):
    key = serializers.CharField(allow_blank=True)
    label = serializers.CharField()
    estimate = EstimateOutput()
    bootstrap_std = serializers.FloatField(allow_null=True)
    items_url = serializers.CharField()


class RubricModelOutput(serializers.Serializer):
    model = serializers.CharField()
    model_id = serializers.IntegerField()
    offline_demo = serializers.BooleanField()
    items = serializers.IntegerField()
    overall = RubricFigureOutput()
    dimension = RubricFigureOutput(many=True)
    acuity = RubricFigureOutput(many=True)
    population = RubricFigureOutput(many=True)


class RubricRunOutput(RubricRunBriefOutput):
    what_they_are = serializers.CharField()
    what_they_are_not = serializers.CharField()
    frozen_criteria = serializers.IntegerField(allow_null=True)
    models = RubricModelOutput(many=True)


class RubricResponseBriefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    acuity = serializers.CharField(allow_blank=True)
    population = serializers.CharField(allow_blank=True)
    model = serializers.CharField()
    status = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    excluded = serializers.CharField(allow_blank=True)
    url = serializers.CharField()


class CriterionGradeOutput(serializers.Serializer):
    criterion = serializers.CharField()
    points = serializers.IntegerField()
    dimension = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    criteria_met = serializers.BooleanField(allow_null=True)
    explanation = serializers.CharField(allow_blank=True)
    counted = serializers.BooleanField()
    why = serializers.CharField()


class MessageOutput(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField(allow_blank=True)


class RubricResponseOutput(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField()
    release = serializers.CharField()
    item = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    acuity = serializers.CharField(allow_blank=True)
    population = serializers.CharField(allow_blank=True)
    language = serializers.CharField()
    demo_material = serializers.BooleanField()
    model = serializers.CharField()
    offline_demo = serializers.BooleanField()
    status = serializers.CharField()
    prompt = MessageOutput(many=True)
    reply = serializers.CharField(allow_blank=True)
    score = serializers.FloatField(allow_null=True)
    criteria = CriterionGradeOutput(many=True)


class PriorityRowOutput(serializers.Serializer):
    dimension = serializers.CharField()
    label = serializers.CharField()
    user_priority = EstimateOutput()
    user_share = EstimateOutput(source="user_share_estimate")
    user_rank = serializers.FloatField(allow_null=True)
    clinician_weight = serializers.FloatField()
    clinician_share = serializers.FloatField(allow_null=True)
    clinician_rank = serializers.FloatField(allow_null=True)
    difference = EstimateOutput()


class ReweightedOutput(serializers.Serializer):
    model = serializers.CharField()
    benchmark = EstimateOutput()
    clinicians = EstimateOutput()
    users = EstimateOutput()


class RubricPrioritiesOutput(serializers.Serializer):
    run = serializers.IntegerField()
    users = serializers.IntegerField()
    clinicians = serializers.IntegerField()
    ratings = serializers.IntegerField()
    kendall_tau = EstimateOutput(source="kendall_tau_estimate")
    rows = PriorityRowOutput(many=True)
    reweighted = ReweightedOutput(many=True)
    note = serializers.CharField()


def _run(pk: int):
    run = public_rubric_run(pk)
    if run is None:
        raise NotFound("No published rubric results for this run.")
    return run


def _figure(figure, items_url: str) -> dict:
    return {
        "key": figure.key,
        "label": figure.label,
        "estimate": figure.estimate,
        "bootstrap_std": figure.bootstrap_std,
        "items_url": items_url,
    }


@extend_schema(
    summary="Official runs with published rubric results, newest first",
    responses={200: RubricRunBriefOutput(many=True), 400: BAD_REQUEST},
)
class RubricRunListApi(PublishedMixin, APIView):
    def get(self, request):
        return Response(RubricRunBriefOutput(public_rubric_runs()[:200], many=True).data)


@extend_schema(
    parameters=[ID_PATH],
    summary="Every rubric figure of a run: per model overall, per dimension, acuity, population",
    responses={200: RubricRunOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricRunApi(PublishedMixin, APIView):
    def get(self, request, pk: int):
        run = _run(pk)
        base = reverse("results-api:rubric-responses", args=[run.pk])
        results = rubric_results(run, items_url=base)
        models = []
        for t in results.targets:
            models.append(
                {
                    "model": t.target,
                    "model_id": t.target_id,
                    "offline_demo": t.is_offline,
                    "items": t.items,
                    "overall": _figure(t.overall, f"{base}?model={t.target_id}"),
                    **{
                        section: [
                            _figure(f, f"{base}?model={t.target_id}&{section}={f.key}")
                            for f in getattr(t, f"by_{section}")
                        ]
                        for section, _ in SECTIONS
                    },
                }
            )
        data = {
            "pk": run.pk,
            "name": run.name,
            "release": run.release,
            "finished_at": run.finished_at,
            "what_they_are": WHAT_THEY_ARE,
            "what_they_are_not": WHAT_THEY_ARE_NOT,
            "frozen_criteria": results.frozen_criteria,
            "models": models,
        }
        return Response(RubricRunOutput(data).data)


def _brief(row) -> dict:
    r = row.response
    return {
        "id": r.pk,
        "item": r.item.key,
        "title": r.item.title,
        "acuity": r.item.acuity,
        "population": r.item.population,
        "model": r.target.name,
        "status": r.status,
        "score": row.score,
        "excluded": row.excluded,
        "url": reverse("results-api:rubric-response", args=[r.pk]),
    }


RESPONSE_FILTERS = [
    OpenApiParameter("model", int, required=False, description="A model configuration id."),
    OpenApiParameter("dimension", str, required=False, description="A behaviour dimension slug."),
    OpenApiParameter("acuity", str, enum=Acuity.values, required=False),
    OpenApiParameter("population", str, enum=Population.values, required=False),
]


@extend_schema(
    parameters=[ID_PATH, *RESPONSE_FILTERS],
    summary="The graded replies behind a rubric figure, each with the score that entered it",
    responses={200: RubricResponseBriefOutput(many=True), 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricResponseListApi(PublishedMixin, APIView):
    def get(self, request, pk: int):
        run = _run(pk)
        params = request.query_params
        model = params.get("model", "")
        if model and not model.isdigit():
            raise ParseError("model: a model configuration id (a number).")
        dimension = params.get("dimension", "")
        if dimension and dimension not in dimension_labels():
            raise ParseError("dimension: a behaviour dimension slug.")
        acuity = params.get("acuity", "")
        if acuity and acuity not in Acuity.values:
            raise ParseError(f"acuity: choose one of {', '.join(Acuity.values)}.")
        population = params.get("population", "")
        if population and population not in Population.values:
            raise ParseError(f"population: choose one of {', '.join(Population.values)}.")
        rows = public_rubric_responses(
            run, target=model, dimension=dimension, acuity=acuity, population=population
        )
        return Response(RubricResponseBriefOutput([_brief(r) for r in rows], many=True).data)


def response_record(response: RubricResponse) -> dict:
    item = response.item
    return {
        "id": response.pk,
        "run": response.run_id,
        "release": response.run.release.version if response.run.release_id else "",
        "item": item.key,
        "title": item.title,
        "acuity": item.acuity,
        "population": item.population,
        "language": item.language,
        "demo_material": bool((item.metadata or {}).get("demo_material")),
        "model": response.target.name,
        "offline_demo": response.is_offline,
        "status": response.status,
        "prompt": [{"role": m["role"], "content": str(m["content"])} for m in item.messages],
        "reply": response.reply,
        "score": response.score,
        "criteria": [
            {
                "criterion": row.criterion.text,
                "points": row.criterion.points,
                "dimension": row.criterion.dimension,
                "tags": list(row.criterion.tags) or [f"axis:{row.criterion.dimension}"],
                "criteria_met": row.grade.met if row.grade else None,
                "explanation": row.grade.justification if row.grade else "",
                "counted": row.counted,
                "why": row.why,
            }
            for row in rubric_response_criteria(response)
        ],
    }


@extend_schema(
    parameters=[ID_PATH],
    summary="One graded rubric reply: conversation, reply, every criterion, counted or not",
    responses={200: RubricResponseOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricResponseApi(PublishedMixin, APIView):
    def get(self, request, pk: int):
        response = public_rubric_response(pk)
        if response is None:
            raise NotFound("No such published rubric reply.")
        return Response(RubricResponseOutput(response_record(response)).data)


@extend_schema(
    parameters=[ID_PATH],
    summary="Users' against clinicians' priorities for a rubric run, and re-weighted scores",
    responses={200: RubricPrioritiesOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricPrioritiesApi(PublishedMixin, APIView):
    def get(self, request, pk: int):
        run = _run(pk)
        data = {
            **rubric_priorities(run),
            "run": run.pk,
            "note": "The benchmark score follows expert consensus; the re-weighted scores are "
            "what-ifs under each audience's priorities, not published results.",
        }
        return Response(RubricPrioritiesOutput(data).data)


# --- A whole run's graded replies ---------------------------------------------------------------


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
