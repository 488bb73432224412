"""The site's URLs plus two API endpoints that call real services, for
tests/core/test_messages_language.py.

The API has no endpoint yet whose request reaches a service that refuses (every API view reads
published figures), so these two stand in for the first one: they run under /api/ behind the
real middleware, parser and exception handler, and call the real services.
"""

from django.shortcuts import get_object_or_404
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.models import EvaluationRun
from evaluations.services.runs import run_pause
from impactbench_site.urls import urlpatterns as site_urlpatterns


class RunPauseApi(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request, pk: int) -> Response:
        run = run_pause(run=get_object_or_404(EvaluationRun, pk=pk))
        return Response({"status": run.status})


class JsonEchoApi(APIView):
    """Reads its body through the API's JSON parser (`core.jsonsafe.json_loads_checked`)."""

    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request) -> Response:
        return Response({"received": request.data})


urlpatterns = [
    path("api/test-only/runs/<int:pk>/pause/", RunPauseApi.as_view(), name="test-run-pause"),
    path("api/test-only/json/", JsonEchoApi.as_view(), name="test-json-echo"),
    *site_urlpatterns,
]
