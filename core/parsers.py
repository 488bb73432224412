"""The API's JSON parser: bounded nesting, no control characters, failures are 400s.

Kept apart from core.api: DRF reads DEFAULT_PARSER_CLASSES while defining APIView, so this
module must not import rest_framework.views.
"""

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .exceptions import ApplicationError
from .jsonsafe import json_loads_checked


class CheckedJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:  # any JSON document, not only an object
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as error:
            raise ParseError(f"The body is not {encoding} text.") from error
        try:
            return json_loads_checked(text)
        except ApplicationError as error:
            raise ParseError(error.message) from error
