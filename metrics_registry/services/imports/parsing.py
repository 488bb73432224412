"""Reading an import file into rows with the numbers a person sees (CSV row, JSON index)."""

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked

IMPORT_COLUMNS = (
    "name",
    "criterion",
    "polarity",
    "subareas",
    "label_category",
    "rubric_notes",
    "age_contexts",
    "source_reference",
    "weight",
)
# Subareas and label category may be left blank: the metric then imports as needing mapping.
REQUIRED_COLUMNS = ("name", "criterion", "polarity")
MAX_IMPORT_ROWS = 5000


@dataclass(frozen=True)
class ImportRow:
    """One record of the file. `number` is what the user sees: CSV row (header = 1) or JSON
    1-based index."""

    number: int
    data: dict[str, Any]


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value).strip()


def fold(value: str) -> str:
    """Spellings that mean the same: case, punctuation, and "&" for "and" do not matter."""
    text = value.casefold().replace("&", " and ")
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text).split())


def _header_key(name: str) -> str:
    return "_".join((name or "").strip().lower().replace("-", " ").split())


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")  # spreadsheets often add a byte order mark
    except UnicodeDecodeError as error:
        raise ApplicationError(
            _("The file is not UTF-8 text (byte %(byte)s); save it as UTF-8 CSV or JSON.")
            % {"byte": error.start}
        ) from error


def _parse_csv(text: str, notes: list[str]) -> list[ImportRow]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise ApplicationError(_("The CSV file is empty.")) from None
    columns = [_header_key(name) for name in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ApplicationError(
            _("The CSV has no %(missing)s column; expected columns %(expected)s (found %(found)s).")
            % {
                "missing": ", ".join(missing),
                "expected": ", ".join(IMPORT_COLUMNS),
                # Translators: no column at all was found in the CSV's header.
                "found": ", ".join(columns) or _("none"),
            }
        )
    unknown = [c for c in columns if c and c not in IMPORT_COLUMNS]
    if unknown:
        notes.append(f"Ignored columns: {', '.join(unknown)}.")
    rows = []
    try:
        # Spreadsheet numbering: the header is row 1, so the first record is row 2. csv.reader
        # yields blank lines as empty lists, so counting every record keeps numbers aligned.
        for number, cells in enumerate(reader, start=2):
            if not any(cell.strip() for cell in cells):
                continue
            data = {
                column: cells[index].strip() if index < len(cells) else ""
                for index, column in enumerate(columns)
                if column in IMPORT_COLUMNS
            }
            rows.append(ImportRow(number=number, data=data))
    except csv.Error as error:
        raise ApplicationError(
            _("The CSV cannot be read near row %(row)s: %(error)s.")
            % {"row": reader.line_num, "error": error}
        ) from error
    return rows


def _parse_json(text: str, notes: list[str]) -> list[ImportRow]:
    # Bounded nesting, no control characters, a clear message where the JSON breaks.
    document = json_loads_checked(text)
    source_weights: dict = {}
    if isinstance(document, dict) and isinstance(document.get("metrics"), list):
        source_weights = document.get("source_weights") or {}
        if not isinstance(source_weights, dict):
            raise ApplicationError(
                _(
                    "source_weights must be an object mapping metric names to weights, e.g. "
                    '{"pushback": 2.2}.'
                )
            )
        document = document["metrics"]
    if not isinstance(document, list):
        raise ApplicationError(
            _(
                'JSON must be a list of metrics or an object {"metrics": [...], "source_weights": '
                "{name: weight}}."
            )
        )
    rows = [
        ImportRow(number=index, data=item if isinstance(item, dict) else {"__invalid__": item})
        for index, item in enumerate(document, start=1)
    ]
    return _weights_apply(rows, source_weights, notes)


def _weights_apply(rows: list[ImportRow], weights: dict, notes: list[str]) -> list[ImportRow]:
    """A source's own weights map (Spiral-Bench's scoring_weights.json) by metric name."""
    if not weights:
        return rows
    by_name = {fold(str(name)): value for name, value in weights.items()}
    used: set[str] = set()
    for row in rows:
        name = fold(cell_text(row.data.get("name")))
        if name in by_name and "__invalid__" not in row.data:
            row.data.setdefault("weight", by_name[name])
            used.add(name)
    unmatched = [str(n) for n in weights if fold(str(n)) not in used]
    if unmatched:
        notes.append(f"source_weights names matching no metric: {', '.join(unmatched)}.")
    return rows


def import_file_parse(
    *, data: bytes | str, filename: str = ""
) -> tuple[str, list[ImportRow], list[str]]:
    """Rows of a CSV or JSON file: (format, rows, notes). Raises ApplicationError if unreadable."""
    text = _decode(data)
    notes: list[str] = []
    lowered = filename.lower()
    if lowered.endswith(".json"):
        file_format = "json"
    elif lowered.endswith(".csv"):
        file_format = "csv"
    else:
        file_format = "json" if text.lstrip()[:1] in ("[", "{") else "csv"
    rows = _parse_json(text, notes) if file_format == "json" else _parse_csv(text, notes)
    if not rows:
        raise ApplicationError(_("The file has no metric rows."))
    if len(rows) > MAX_IMPORT_ROWS:
        raise ApplicationError(
            _("The file has %(count)s rows; split it into files of at most %(max_import_rows)s.")
            % {"count": len(rows), "max_import_rows": MAX_IMPORT_ROWS}
        )
    return file_format, rows, notes
