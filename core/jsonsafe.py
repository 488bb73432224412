"""JSON from outside, parsed with a bound on nesting and no control characters in any string.

Python's json module recurses per nesting level, so a document of 100,000 "[" ends in
RecursionError; the depth is measured first with a linear scan that never recurses. Numbers are
bounded too: an integer of more than MAX_INTEGER_DIGITS digits (Python refuses to read one past
4,300) or a number too large for a float is refused with a reason.
"""

import json
import math
from collections.abc import Iterator
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _

from .exceptions import ApplicationError
from .validators import control_character_find

MAX_JSON_DEPTH = 32
# Any count, id or weight fits; a bigint has 19 digits.
MAX_INTEGER_DIGITS = 30


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ApplicationError(
            _("The JSON holds a number of %(digits)s digits; at most %(limit)d are accepted.")
            % {
                "digits": number_format(len(text.lstrip("-")), force_grouping=True),
                "limit": MAX_INTEGER_DIGITS,
            }
        )
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ApplicationError(
            _("The JSON holds a number too large to use (%(text)s…).") % {"text": text[:20]}
        )
    return value


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in `text`, ignoring brackets inside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _strings(value: Any) -> Iterator[str]:
    """Every key and string value of a parsed document, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def json_loads_checked(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse `text`; ApplicationError (with a reason) when invalid, too deep or holding control
    characters."""
    depth = json_depth(text)
    if depth > max_depth:
        raise ApplicationError(
            _(
                "The JSON is nested %(depth)s levels deep; at most %(max_depth)s "
                "levels are accepted."
            )
            % {"depth": depth, "max_depth": max_depth}
        )
    try:
        document = json.loads(text, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as error:
        raise ApplicationError(
            _("This is not valid JSON (line %(line)s, column %(column)s: %(error)s).")
            % {"line": error.lineno, "column": error.colno, "error": error.msg}
        ) from error
    for string in _strings(document):
        if found := control_character_find(string):
            raise ApplicationError(
                _("The JSON contains a control character (%(found)s).") % {"found": found}
            )
    return document
