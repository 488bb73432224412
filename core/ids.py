"""Object ids from addresses and forms, parsed in one place.

``str.isdigit()`` accepts "²", Arabic-Indic and fullwidth digits, which ``int()`` then refuses
or reads as another number, and an ORM lookup with "abc" raises deep in the database layer.
An id here is ASCII digits only, within the database's bigint range; anything else is a bad
request with a reason (``core.middleware`` answers 400, JSON on the API).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.core.exceptions import BadRequest
from django.utils.translation import gettext as _

_ID = re.compile(r"[0-9]{1,19}", flags=re.ASCII)
MAX_ID = 2**63 - 1


class InvalidIdentifier(BadRequest):
    """A parameter that should name an object by id is not a whole number."""

    def __init__(self, name: str):
        super().__init__(
            _("%(name)s: an id is a whole number written with the digits 0-9.") % {"name": name}
        )
        self.message = self.args[0]


def identifier_parse(value: object, *, name: str = "id") -> int | None:
    """The id in ``value`` (an int or its ASCII digits); None when nothing was given."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= MAX_ID:
            return value
        raise InvalidIdentifier(name)
    if isinstance(value, str) and _ID.fullmatch(value) and int(value) <= MAX_ID:
        return int(value)
    raise InvalidIdentifier(name)


def identifiers_parse(values: Iterable[object], *, name: str = "id") -> list[int]:
    """Every id of a multi-valued parameter; one bad value refuses the whole request."""
    parsed = [identifier_parse(value, name=name) for value in values]
    return [value for value in parsed if value is not None]


def is_identifier(value: object) -> bool:
    """Whether ``value`` reads as an id (where a parameter may also be a name, say)."""
    try:
        return identifier_parse(value) is not None
    except InvalidIdentifier:
        return False
