"""Public results API: read-only, anonymous, published (official) runs only.

Every response on published data carries Cache-Control and an ETag (a 304 answers a matching
If-None-Match). No authentication is declared: the same answer goes to everyone.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import ErrorOutput
from core.ids import identifier_parse
from core.pagecache import PublishedPageCacheMixin
from metrics_registry.selectors import area_list_with_subareas

from ..language_pages import language_comparisons_api
from ..models import SummaryLevel
from ..public import AGES, POLARITIES, explore_cells, metric_results, public_metric, run_version_of
from ..selectors import (
    public_conversation,
    public_run,
    public_run_conversations,
    public_run_with_targets,
    public_runs,
    public_scenario,
    run_summary_rows,
    run_target,
    run_targets,
)
from ..services.judge_trust import (
    metric_judge_trust,
    target_self_preference,
    trust_api,
)
from ..services.panel import panel_published
from . import serializers as s
from .language_serializers import (
    LANG_PARAM,
    ExploreLanguagesOutput,
    MetricResultsLanguagesOutput,
    language_param,
    languages_output,
)
from .panel_serializers import RunPanelOutput

NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such published object.")
# Any address may be refused before the view runs (a control character, core.middleware).
BAD_REQUEST = OpenApiResponse(
    ErrorOutput, description="A filter has an invalid value, or the address is malformed."
)
NO_PAGE = OpenApiResponse(ErrorOutput, description="No such page of the list.")
# Django's <int:pk> takes digits only: any other id is not a path of this API at all.
ID_PATH = OpenApiParameter(
    "id", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH, description="The object's id."
)
RUN_PARAM = OpenApiParameter(
    "run", int, required=False, description="A public run id (default: the latest official run)."
)


class PublishedMixin(PublishedPageCacheMixin):
    """Anonymous, read-only; answers come from the shared cache with an ETag (304 on match)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    http_method_names = ["get", "head", "options"]
    page_cache_anonymous_only = False
    page_cache_params: tuple[str, ...] = ("run",)

    @property
    def page_cache_name(self) -> str:
        return f"api.{type(self).__name__}"

    def get_run(self):
        asked = self.request.query_params.get("run", "")
        run = public_run(asked)
        if run is None:
            raise NotFound(
                "No published results for this run." if asked else "No published results yet."
            )
        return run


def _choice(params, name: str, allowed: tuple[str, ...], default: str | None = None):
    value = params.get(name) or default
    if value is not None and value not in allowed:
        raise ParseError(f"{name}: choose one of {', '.join(allowed)}.")
    return value


@extend_schema(
    summary="Areas and their subareas", responses={200: s.AreaOutput(many=True), 400: BAD_REQUEST}
)
class AreaListApi(PublishedMixin, generics.ListAPIView):
    serializer_class = s.AreaOutput
    pagination_class = None

    def get_queryset(self):
        return area_list_with_subareas()


@extend_schema(
    summary="Official runs of published releases, newest first",
    responses={200: s.RunOutput(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
)
class RunListApi(PublishedMixin, generics.ListAPIView):
    serializer_class = s.RunOutput
    page_cache_params = ("page",)

    def get_queryset(self):
        return public_runs().prefetch_related("targets")


@extend_schema(
    parameters=[ID_PATH],
    summary="One official run",
    responses={200: s.RunOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunDetailApi(PublishedMixin, generics.RetrieveAPIView):
    serializer_class = s.RunOutput

    def get_object(self):
        run = public_run_with_targets(self.kwargs["pk"])
        if run is None:
            raise NotFound("No published results for this run.")
        return run


RESULT_FILTERS = [
    OpenApiParameter("level", str, enum=[c.value for c in SummaryLevel], required=False),
    OpenApiParameter("age_context", str, enum=list(AGES), required=False),
    OpenApiParameter("polarity", str, enum=list(POLARITIES), required=False),
    OpenApiParameter("target", int, required=False),
    OpenApiParameter("area", str, required=False, description="Area slug."),
    OpenApiParameter("subarea", str, required=False, description="Subarea slug."),
    OpenApiParameter("metric", str, required=False, description="Metric key."),
    LANG_PARAM,
]


def _target_id(params) -> int | None:
    return identifier_parse(params.get("target"), name="target")


@extend_schema(
    summary="Pass rates of an official run at every level (overall, area, subarea, metric)",
    parameters=[ID_PATH, *RESULT_FILTERS],
    responses={200: s.ResultOutput(many=True), 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunResultsApi(PublishedMixin, generics.ListAPIView):
    serializer_class = s.ResultOutput
    page_cache_params = (
        "level",
        "age_context",
        "polarity",
        "target",
        "area",
        "subarea",
        "metric",
        "lang",
        "page",
    )

    def get_queryset(self):
        run = public_run(self.kwargs["pk"])
        if run is None:
            raise NotFound("No published results for this run.")
        params = self.request.query_params
        return run_summary_rows(
            run=run,
            level=_choice(params, "level", tuple(c.value for c in SummaryLevel)),
            age_context=_choice(params, "age_context", AGES),
            polarity=_choice(params, "polarity", POLARITIES),
            target_id=_target_id(params),
            area=params.get("area", ""),
            subarea=params.get("subarea", ""),
            metric=params.get("metric", ""),
            language=language_param(params, run).summary_language,
        )


@extend_schema(
    parameters=[ID_PATH],
    summary="The panel of judges of an official run: agreement and each judge's pass rates",
    responses={200: RunPanelOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunPanelApi(PublishedMixin, APIView):
    page_cache_params = ()

    def get(self, request, pk: int):
        run = public_run(pk)
        if run is None:
            raise NotFound("No published results for this run.")
        return Response(RunPanelOutput({"run": run.pk, **panel_published(run)}).data)


@extend_schema(
    summary="Conversations of an official run (filter by metric key, target, status)",
    parameters=[
        ID_PATH,
        OpenApiParameter("metric", str, required=False),
        OpenApiParameter("target", int, required=False),
        OpenApiParameter("status", str, required=False, enum=["completed", "failed"]),
    ],
    responses={200: s.ConversationBriefOutput(many=True), 400: BAD_REQUEST, 404: NOT_FOUND},
)
class RunConversationListApi(PublishedMixin, generics.ListAPIView):
    serializer_class = s.ConversationBriefOutput
    page_cache_params = ("metric", "target", "status", "page")

    def get_queryset(self):
        params = self.request.query_params
        status = params.get("status")
        return public_run_conversations(
            run_id=self.kwargs["pk"],
            metric=params.get("metric", ""),
            target_id=_target_id(params),
            status=status if status in ("completed", "failed") else "",
        )

    def list(self, request, *args, **kwargs):
        if not public_runs().filter(pk=self.kwargs["pk"]).exists():
            raise NotFound("No published results for this run.")
        return super().list(request, *args, **kwargs)


@extend_schema(
    parameters=[ID_PATH],
    summary="A conversation of an official run: transcript, judge readings, verdict",
    responses={200: s.ConversationOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class ConversationDetailApi(PublishedMixin, generics.RetrieveAPIView):
    serializer_class = s.ConversationOutput

    def get_object(self):
        conversation = public_conversation(self.kwargs["pk"])
        if conversation is None:
            raise NotFound("This conversation is not part of published results.")
        return conversation


@extend_schema(
    parameters=[ID_PATH],
    summary="A scenario evaluated in an official run",
    responses={200: s.ScenarioOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class ScenarioDetailApi(PublishedMixin, generics.RetrieveAPIView):
    serializer_class = s.ScenarioOutput

    def get_object(self):
        scenario = public_scenario(self.kwargs["pk"])
        if scenario is None:
            raise NotFound("This scenario is not part of published results.")
        return scenario


@extend_schema(
    summary="The Explore wheel of one model: area and subarea pass rates",
    parameters=[
        RUN_PARAM,
        OpenApiParameter("model", int, required=False, description="Model configuration id."),
        OpenApiParameter("age_context", str, enum=list(AGES), required=False),
        OpenApiParameter("polarity", str, enum=list(POLARITIES), required=False),
        LANG_PARAM,
    ],
    responses={200: ExploreLanguagesOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class ExploreApi(PublishedMixin, APIView):
    page_cache_params = ("run", "model", "age_context", "polarity", "lang")

    def get(self, request):
        run = self.get_run()
        params = request.query_params
        age = _choice(params, "age_context", AGES, "all")
        polarity = _choice(params, "polarity", POLARITIES, "positive")
        model = identifier_parse(params.get("model"), name="model")
        target = run_targets(run).first() if model is None else run_target(run, model)
        if target is None:
            raise NotFound("This model is not part of the published results.")
        lang = language_param(params, run)
        cells = explore_cells(
            run=run, target=target, age=age, polarity=polarity, language=lang.summary_language
        )
        data = {
            "run": run.pk,
            "release": run.release.version,
            "target": target.pk,
            "target_name": target.name,
            "age_context": age,
            "polarity": polarity,
            "cells": cells,
            "language": languages_output(lang),
            "language_comparisons": language_comparisons_api(run),
        }
        return Response(ExploreLanguagesOutput(data).data)


@extend_schema(
    summary="A metric's pass rate per model in an official run (teen and adult apart)",
    parameters=[RUN_PARAM, LANG_PARAM],
    responses={200: MetricResultsLanguagesOutput, 400: BAD_REQUEST, 404: NOT_FOUND},
)
class MetricResultsApi(PublishedMixin, APIView):
    page_cache_params = ("run", "lang")

    def get(self, request, key: str):
        run = self.get_run()
        metric = public_metric(key)
        version = run_version_of(run, metric) if metric else None
        if version is None:
            raise NotFound(f"No results for metric {key} in this run.")
        lang = language_param(request.query_params, run)
        results = metric_results(
            run=run,
            version=version,
            targets=list(run_targets(run)),
            language=lang.summary_language,
        )
        overall, by_target = metric_judge_trust(run, key)
        data = {
            "run": run.pk,
            "release": run.release.version,
            "metric": key,
            "metric_version": version.number,
            "polarity": version.polarity,
            "results": [
                {
                    "target": r.target.pk,
                    "target_name": r.target.name,
                    "all": r.all,
                    "teen": r.teen,
                    "adult": r.adult,
                    "judge_trust": trust_api(by_target.get(r.target.pk)),
                    "judge_self_preference": target_self_preference(run, r.target),
                }
                for r in results
            ],
            "judge_trust": trust_api(overall),
            "language": languages_output(lang),
            "language_comparisons": language_comparisons_api(run, metric_version=version.pk),
        }
        return Response(MetricResultsLanguagesOutput(data).data)
