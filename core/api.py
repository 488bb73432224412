"""API errors are JSON with a reason a client can show."""

from typing import Any

from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .exceptions import ApplicationError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response({"detail": exc.message, **exc.extra}, status=400)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, list):
        response.data = {"detail": response.data}
    return response


class ErrorOutput(serializers.Serializer):
    """The body of every API error (documented on 400/403/404 responses)."""

    detail = serializers.CharField()
