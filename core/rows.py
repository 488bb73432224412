"""Small generic helpers for writing rows and deriving seeds, shared by every app.

`stable_seed` gives the same seed for the same parts in every process (Python's ``hash`` is
salted per process), so a re-run asks a model exactly what it asked before and its cached reply
is reused; `create_unless_present` inserts a row that is unique on a lookup without the SELECT
that ``get_or_create`` always makes first; `update_grouped` writes fields of many rows with one
UPDATE per distinct set of values instead of ``bulk_update``'s CASE over every row.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import TypeVar

from django.db import IntegrityError, models, transaction

M = TypeVar("M", bound=models.Model)
SEED_MODULUS = 2**31 - 1  # fits every endpoint's seed parameter


def stable_seed(*parts: object) -> int:
    """A seed derived from `parts`, the same in every process (unlike hash())."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") % SEED_MODULUS


def create_unless_present(model: type[M], *, lookup: dict, values: dict) -> M:
    """Insert a row unique on `lookup`, or return the one another worker wrote first.

    Like get_or_create but inserting first: the row is almost never there, so this saves the
    SELECT that get_or_create always makes (a third of the queries of a conversation).
    """
    try:
        with transaction.atomic():
            return model._default_manager.create(**lookup, **values)
    except IntegrityError:
        return model._default_manager.get(**lookup)


def _attname(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):  # a reverse relation: no column of this table
        raise ValueError(f"{name} is not a concrete field of {model.__name__}")
    return field.attname


def update_grouped(model: type[M], rows: Sequence[M], fields: Sequence[str]) -> int:
    """Write `fields` of the saved `rows` (as ``bulk_update`` does): one UPDATE … WHERE pk IN
    (…) per distinct set of values. Returns the number of statements.

    ``bulk_update`` makes one statement whose every column is a CASE with a branch per row:
    building it costs over a millisecond of CPU per row (thousands of expression objects), and
    the database tries up to N branches for each of the N rows. Rows closed together (the
    engine's conversations) share a few value sets (the same `now`, the same status, a
    handful of verdicts), so this costs microseconds a row. Values that are expressions or
    unhashable (JSON) go through ``bulk_update``.
    """
    attnames = [_attname(model, name) for name in fields]
    groups: dict[tuple, list] = defaultdict(list)
    try:
        for row in rows:
            values = tuple(getattr(row, name) for name in attnames)
            if any(hasattr(value, "resolve_expression") for value in values):
                raise TypeError("an expression")
            groups[values].append(row.pk)
    except TypeError:
        model._default_manager.bulk_update(rows, fields)
        return 1 if rows else 0
    for values, pks in groups.items():
        model._default_manager.filter(pk__in=pks).update(**dict(zip(attnames, values, strict=True)))
    return len(groups)
