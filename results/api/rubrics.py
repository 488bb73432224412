"""Public rubric results in the API: runs, every figure of a run, the replies behind a figure,
one graded reply, users against clinicians (a whole run's graded replies: `rubric_exports`).
Same rules as the rest: anonymous, official runs only, ETags and Cache-Control."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.ids import identifier_parse
from evaluations.models import RubricResponse
from rubrics.dimensions import dimension_labels
from rubrics.models import Acuity, Population

from ..language_pages import ALL, rubric_language_choice
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
    rubric_run_languages,
)
from .language_serializers import languages_output
from .rubric_serializers import (
    RubricPrioritiesOutput,
    RubricResponseBriefOutput,
    RubricResponseOutput,
    RubricRunBriefOutput,
    RubricRunOutput,
)
from .views import BAD_REQUEST, ID_PATH, NOT_FOUND, PublishedMixin


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


RUBRIC_LANG = OpenApiParameter(
    "lang",
    str,
    required=False,
    description="“all” (default: every language's items) or one of the run's item languages.",
)


def _rubric_language(params, run) -> str:
    """The item language asked for ("" for all); any other value than the run's is a bad
    request naming them."""
    raw = params.get("lang")
    choice = rubric_language_choice(rubric_run_languages(run), raw)
    if (raw or ALL) != choice.current:
        raise ParseError(f"lang: choose one of {', '.join((ALL, *choice.languages))}.")
    return choice.summary_language


@extend_schema(
    parameters=[ID_PATH, RUBRIC_LANG],
    summary="Every rubric figure of a run: per model overall, per dimension, acuity, population",
    responses={200: RubricRunOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricRunApi(PublishedMixin, APIView):
    page_cache_params = ("lang",)

    def get(self, request, pk: int):
        run = _run(pk)
        base = reverse("results-api:rubric-responses", args=[run.pk])
        language = _rubric_language(request.query_params, run)
        results = rubric_results(run, items_url=base, language=language)
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
            "teen_adult": [
                {
                    "model": m.target,
                    "model_id": m.target_id,
                    "language": m.language,
                    "rows": [
                        {
                            "key": r.key,
                            "label": r.label,
                            "estimate": r.estimate,
                            "n_teen": r.n_teen,
                            "n_adult": r.n_adult,
                        }
                        for r in m.rows
                    ],
                }
                for m in results.teen_adult
            ],
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
    page_cache_params = ("model", "dimension", "acuity", "population")

    def get(self, request, pk: int):
        run = _run(pk)
        params = request.query_params
        model = identifier_parse(params.get("model"), name="model") or ""
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
    parameters=[
        ID_PATH,
        OpenApiParameter(
            "lang",
            str,
            required=False,
            description="“all” (default: every language pooled) or one of the run's item "
            "languages: every figure over that language's items alone.",
        ),
    ],
    summary="Users' against clinicians' priorities for a rubric run, and re-weighted scores",
    responses={200: RubricPrioritiesOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RubricPrioritiesApi(PublishedMixin, APIView):
    page_cache_params = ("lang",)

    def get(self, request, pk: int):
        run = _run(pk)
        asked = request.query_params.get("lang") or ALL
        lang = rubric_language_choice(rubric_run_languages(run), asked)
        if asked != lang.current:
            raise ParseError(f"lang: choose one of {', '.join((ALL, *lang.languages))}.")
        data = {
            **rubric_priorities(run, lang.summary_language),
            "language": languages_output(lang),
            "run": run.pk,
            "note": "The benchmark score follows expert consensus; the re-weighted scores are "
            "what-ifs under each audience's priorities, not published results.",
        }
        return Response(RubricPrioritiesOutput(data).data)
