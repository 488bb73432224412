from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from core.api import ErrorOutput
from core.pagecache import PublishedPageCacheMixin

from ..from_above import FromAboveMixin
from ..selectors import (
    metric_list,
    release_item_values,
    release_list,
    release_subarea_values,
)
from ..services import release_changelog
from ..text_selectors import public_texts_prefetch
from .permissions import ReadOnly
from .serializers import MetricDetailOutput, MetricOutput, ReleaseDetailOutput, ReleaseOutput

NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such published object.")
# Any address may be refused before the view runs (a control character, core.middleware).
BAD_REQUEST = OpenApiResponse(ErrorOutput, description="The address is malformed.")
NO_PAGE = OpenApiResponse(ErrorOutput, description="No such page of the list.")
METRIC_FILTERS = ("area", "subarea", "polarity", "label_category", "status", "benchmark", "search")


@extend_schema(
    parameters=[OpenApiParameter(name, str, required=False) for name in METRIC_FILTERS],
    summary="Metrics with their current version (filters as on the Metrics page)",
    responses={200: MetricOutput(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
)
class MetricListApi(generics.ListAPIView):
    permission_classes = [AllowAny, ReadOnly]
    serializer_class = MetricOutput

    def get_queryset(self):
        params = self.request.query_params
        filters = {name: params.get(name) or None for name in METRIC_FILTERS}
        return metric_list(user=self.request.user, **filters)


@extend_schema(responses={200: MetricDetailOutput, 400: BAD_REQUEST, 404: NOT_FOUND})
class MetricDetailApi(generics.RetrieveAPIView):
    permission_classes = [AllowAny, ReadOnly]
    serializer_class = MetricDetailOutput

    def get_object(self):
        metric = (
            metric_list(user=self.request.user)
            .prefetch_related(
                "versions",
                public_texts_prefetch("current_version__texts"),
            )
            .filter(key=self.kwargs["key"])
            .first()
        )
        if metric is None:
            raise NotFound(f"No metric with key {self.kwargs['key']}.")
        return metric


@extend_schema(responses={200: ReleaseOutput(many=True), 400: BAD_REQUEST, 404: NO_PAGE})
class ReleaseListApi(generics.ListAPIView):
    """Published releases, newest first (maintainers also see drafts)."""

    permission_classes = [AllowAny, ReadOnly]
    serializer_class = ReleaseOutput

    def get_queryset(self):
        return release_list(user=self.request.user).annotate(metric_count=Count("items"))


@extend_schema(responses={200: ReleaseDetailOutput, 400: BAD_REQUEST, 404: NOT_FOUND})
class ReleaseDetailApi(FromAboveMixin, PublishedPageCacheMixin, generics.RetrieveAPIView):
    """A release with its metric versions and the changelog against the previous release.

    Signed-out readers get it from the page cache (maintainers also see drafts).
    """

    page_cache_name = "api.ReleaseDetailApi"

    permission_classes = [AllowAny, ReadOnly]
    serializer_class = ReleaseDetailOutput

    def get_object(self):
        release = (
            release_list(user=self.request.user)
            .annotate(metric_count=Count("items"))
            .filter(version=self.kwargs["version"])
            .first()
        )
        if release is None:
            raise NotFound(f"No published release {self.kwargs['version']}.")
        return release

    def retrieve(self, request, *args, **kwargs):
        release = self.get_object()
        context = {
            **self.get_serializer_context(),
            "items": release_item_values(release),
            "subareas": release_subarea_values(release),
            "changelog": release_changelog(release),
            "downloads": self.from_above("release_downloads")(release=release),
        }
        return Response(ReleaseDetailOutput(release, context=context).data)
