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

from .exceptions import ApplicationError
from .validators import control_character_find

MAX_JSON_DEPTH = 32
# Any count, id or weight fits; a bigint has 19 digits.
MAX_INTEGER_DIGITS = 30


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ApplicationError(
            f"The JSON holds a number of {len(text.lstrip('-')):,} digits; at most "
            f"{MAX_INTEGER_DIGITS} are accepted."
        )
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ApplicationError(f"The JSON holds a number too large to use ({text[:20]}…).")
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
            f"The JSON is nested {depth} levels deep; at most {max_depth} levels are accepted."
        )
    try:
        document = json.loads(text, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as error:
        raise ApplicationError(
            f"This is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})."
        ) from error
    for string in _strings(document):
        if found := control_character_find(string):
            raise ApplicationError(f"The JSON contains a control character ({found}).")
    return document
