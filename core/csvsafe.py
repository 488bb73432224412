"""The one way the platform writes CSV: cells a spreadsheet would run as formulas are
neutralised (OWASP's rule: a leading =, +, -, @, tab or carriage return gets a ' in front).

Numbers stay numbers: ints, floats and strings that are plain decimals ("-0.25") pass as they
are, since a spreadsheet reads them as values, not formulas.
"""

import csv
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: Any) -> Any:
    """`value` safe to open in a spreadsheet."""
    if not isinstance(value, str) or not value.startswith(FORMULA_TRIGGERS):
        return value
    if _PLAIN_NUMBER.match(value):
        return value
    return "'" + value


class _Echo:
    """A file that hands back what is written, for streaming one row at a time."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """Each row as one CSV line (header rows included), every cell neutralised."""
    writer = csv.writer(_Echo())
    for row in rows:
        yield writer.writerow([csv_cell(cell) for cell in row])


def csv_dict_lines(fieldnames: list[str], records: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """A header line, then each record's values in `fieldnames` order, neutralised."""
    yield from csv_lines([fieldnames])
    yield from csv_lines([record.get(name, "") for name in fieldnames] for record in records)
