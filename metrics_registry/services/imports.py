"""Importing an existing benchmark or harm taxonomy into the metric template.

A file goes through three steps: parse (rows with the numbers a person sees), validate (a clear
reason per bad row), then write everything or nothing — unless the user asks to skip bad rows.
Duplicates, within the file or of metrics already imported from the same benchmark, are
reported and left out, so importing the same file twice creates nothing the second time.
"""

import csv
import difflib
import io
import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.text import slugify

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked
from core.validators import control_character_find, text_length_problem

from ..models import AgeContexts, Benchmark, LabelCategory, MetricVersion, SourceKind, Subarea
from .metrics import benchmark_get_or_create, metric_create

IMPORT_COLUMNS = (
    "name",
    "criterion",
    "polarity",
    "subareas",
    "label_category",
    "rubric_notes",
    "age_contexts",
    "source_reference",
)
REQUIRED_COLUMNS = ("name", "criterion", "polarity", "subareas", "label_category")
MAX_IMPORT_ROWS = 5000

POLARITY_WORDS = {
    "positive": "positive",
    "pos": "positive",
    "+": "positive",
    "promote": "positive",
    "negative": "negative",
    "neg": "negative",
    "-": "negative",
    "avoid": "negative",
}


@dataclass(frozen=True)
class ImportRow:
    """One record of the file. `number` is what the user sees: CSV row (header = 1) or JSON
    1-based index."""

    number: int
    data: dict[str, Any]


@dataclass(frozen=True)
class ImportProblem:
    number: int
    reason: str


@dataclass(frozen=True)
class ImportCandidate:
    number: int
    name: str
    criterion: str
    polarity: str
    subarea_slugs: tuple[str, ...]
    label_category_slug: str
    rubric_notes: str
    age_contexts: str
    source_reference: str


@dataclass
class ImportReport:
    benchmark_slug: str
    file_format: str
    dry_run: bool
    skip_bad_rows: bool
    total_rows: int = 0
    candidates: list[ImportCandidate] = field(default_factory=list)
    errors: list[ImportProblem] = field(default_factory=list)
    duplicates: list[ImportProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    created_keys: list[str] = field(default_factory=list)
    committed: bool = False

    @property
    def blocked(self) -> bool:
        """Bad rows stop the whole import unless the user chose to skip them."""
        return bool(self.errors) and not self.skip_bad_rows

    @property
    def skipped(self) -> list[ImportProblem]:
        return self.errors if self.skip_bad_rows else []

    @property
    def summary(self) -> str:
        counts = (
            f"{self.total_rows} rows: {len(self.candidates)} new, "
            f"{len(self.duplicates)} duplicates, {len(self.errors)} bad"
        )
        if self.committed:
            skipped = f", {len(self.skipped)} bad rows skipped" if self.skipped else ""
            return f"Imported {len(self.created_keys)} metrics{skipped} ({counts})."
        if self.blocked:
            return (
                f"Nothing imported: fix the {len(self.errors)} bad rows or choose to skip them "
                f"({counts})."
            )
        if self.dry_run:
            return f"Dry run: {len(self.candidates)} metrics would be imported ({counts})."
        return f"Nothing to import ({counts})."


# --- Parsing -----------------------------------------------------------------------------------


def _header_key(name: str) -> str:
    return "_".join((name or "").strip().lower().replace("-", " ").split())


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")  # spreadsheets often add a byte order mark
    except UnicodeDecodeError as error:
        raise ApplicationError(
            f"The file is not UTF-8 text (byte {error.start}); save it as UTF-8 CSV or JSON."
        ) from error


def _parse_csv(text: str, notes: list[str]) -> list[ImportRow]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise ApplicationError("The CSV file is empty.") from None
    columns = [_header_key(name) for name in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ApplicationError(
            f"The CSV has no {', '.join(missing)} column; expected columns "
            f"{', '.join(IMPORT_COLUMNS)} (found {', '.join(columns) or 'none'})."
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
            f"The CSV cannot be read near row {reader.line_num}: {error}."
        ) from error
    return rows


def _parse_json(text: str) -> list[ImportRow]:
    document = json_loads_checked(text)
    if isinstance(document, dict) and isinstance(document.get("metrics"), list):
        document = document["metrics"]
    if not isinstance(document, list):
        raise ApplicationError('JSON must be a list of metrics or an object {"metrics": [...]}.')
    return [
        ImportRow(number=index, data=item if isinstance(item, dict) else {"__invalid__": item})
        for index, item in enumerate(document, start=1)
    ]


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
    rows = _parse_json(text) if file_format == "json" else _parse_csv(text, notes)
    if not rows:
        raise ApplicationError("The file has no metric rows.")
    if len(rows) > MAX_IMPORT_ROWS:
        raise ApplicationError(
            f"The file has {len(rows)} rows; split it into files of at most {MAX_IMPORT_ROWS}."
        )
    return file_format, rows, notes


# --- Validation --------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value).strip()


def _criterion_key(criterion: str) -> str:
    return " ".join(criterion.casefold().split())


class _Vocabulary:
    """Resolves slugs or display names (any case) to slugs, suggesting near misses."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.lookup: dict[str, str] = {}
        for slug, name in pairs:
            for alias in (slug, name.casefold(), slugify(name)):
                self.lookup[alias.casefold()] = slug
        self.names = [name for _, name in pairs] + [slug for slug, _ in pairs]

    def resolve(self, value: str) -> str | None:
        return self.lookup.get(value.casefold()) or self.lookup.get(slugify(value))

    def suggestion(self, value: str) -> str:
        close = difflib.get_close_matches(value, self.names, n=1, cutoff=0.5)
        if not close:
            close = difflib.get_close_matches(slugify(value), self.names, n=1, cutoff=0.4)
        return f' — did you mean "{close[0]}"?' if close else ""


def _row_validate(
    row: ImportRow, subareas: _Vocabulary, categories: _Vocabulary
) -> ImportCandidate | str:
    """A candidate, or the reasons (joined) why the row cannot be imported."""
    data = row.data
    if "__invalid__" in data:
        return "the entry is not an object with metric fields"
    reasons = []
    for column, value in data.items():
        if isinstance(value, str) and (found := control_character_find(value)):
            reasons.append(f"{column} contains a control character ({found})")
        if problem := text_length_problem(value, what=column):
            reasons.append(problem)
    name = _text(data.get("name"))
    criterion = _text(data.get("criterion"))
    if not criterion:
        reasons.append("missing criterion")
    if not name:
        reasons.append("missing name")
    elif len(name) > 200:
        reasons.append(f"name is too long ({len(name)} characters, at most 200)")

    raw_polarity = _text(data.get("polarity"))
    polarity = POLARITY_WORDS.get(raw_polarity.casefold())
    if not raw_polarity:
        reasons.append("missing polarity (positive or negative)")
    elif polarity is None:
        reasons.append(f'bad polarity "{raw_polarity}": use positive or negative')

    raw_subareas = data.get("subareas")
    if isinstance(raw_subareas, list):
        subarea_values = [_text(value) for value in raw_subareas]
    else:
        subarea_values = _text(raw_subareas).split(";")
    subarea_values = [value for value in (v.strip() for v in subarea_values) if value]
    subarea_slugs: list[str] = []
    if not subarea_values:
        reasons.append("missing subareas (at least one, separated by ;)")
    for value in subarea_values:
        slug = subareas.resolve(value)
        if slug is None:
            reasons.append(f'unknown subarea "{value}"{subareas.suggestion(value)}')
        elif slug not in subarea_slugs:
            subarea_slugs.append(slug)

    raw_category = _text(data.get("label_category"))
    category = categories.resolve(raw_category) if raw_category else None
    if not raw_category:
        reasons.append("missing label_category")
    elif category is None:
        reasons.append(
            f'unknown label category "{raw_category}"{categories.suggestion(raw_category)}'
        )

    age_contexts = _text(data.get("age_contexts")).casefold() or AgeContexts.BOTH
    if age_contexts not in AgeContexts.values:
        reasons.append(f'bad age_contexts "{age_contexts}": use teen, adult or both')

    if reasons:
        return "; ".join(reasons)
    return ImportCandidate(
        number=row.number,
        name=name,
        criterion=criterion,
        polarity=polarity,
        subarea_slugs=tuple(subarea_slugs),
        label_category_slug=category,
        rubric_notes=_text(data.get("rubric_notes")),
        age_contexts=age_contexts,
        source_reference=_text(data.get("source_reference")),
    )


def _existing_criteria(benchmark: Benchmark | None) -> dict[str, str]:
    """Criteria of every version of the benchmark's metrics, so revised metrics still match."""
    if benchmark is None:
        return {}
    versions = MetricVersion.objects.filter(metric__benchmark=benchmark).values_list(
        "criterion", "metric__key"
    )
    return {_criterion_key(criterion): key for criterion, key in versions}


# --- The import --------------------------------------------------------------------------------


@transaction.atomic
def metrics_import(
    *,
    rows: list[ImportRow],
    benchmark_slug: str,
    benchmark_details: dict[str, str] | None = None,
    created_by: AbstractBaseUser | None,
    file_format: str = "csv",
    filename: str = "",
    dry_run: bool = True,
    skip_bad_rows: bool = False,
    notes: list[str] | None = None,
) -> ImportReport:
    """Validate `rows` and, unless this is a dry run or bad rows block it, create the metrics.

    `benchmark_details` (name, citation, url, description, license) is used only when the
    benchmark does not exist yet. Imported metrics start under review.
    """
    slug = slugify(benchmark_slug or "")
    if not slug:
        raise ApplicationError("Name the benchmark the metrics come from (a short identifier).")
    report = ImportReport(
        benchmark_slug=slug,
        file_format=file_format,
        dry_run=dry_run,
        skip_bad_rows=skip_bad_rows,
        total_rows=len(rows),
        notes=list(notes or []),
    )
    benchmark = Benchmark.objects.select_for_update().filter(slug=slug).first()
    if benchmark is None:
        report.notes.append(f'Benchmark "{slug}" is new and will be created.')
    subareas = _Vocabulary(list(Subarea.objects.values_list("slug", "name")))
    categories = _Vocabulary(list(LabelCategory.objects.values_list("slug", "name")))
    existing = _existing_criteria(benchmark)
    seen_in_file: dict[str, int] = {}

    for row in rows:
        result = _row_validate(row, subareas, categories)
        if isinstance(result, str):
            report.errors.append(ImportProblem(row.number, result))
            continue
        criterion_key = _criterion_key(result.criterion)
        if criterion_key in seen_in_file:
            report.duplicates.append(
                ImportProblem(row.number, f"same criterion as row {seen_in_file[criterion_key]}")
            )
            continue
        seen_in_file[criterion_key] = row.number
        if criterion_key in existing:
            report.duplicates.append(
                ImportProblem(row.number, f"already imported as {existing[criterion_key]}")
            )
            continue
        report.candidates.append(result)

    if dry_run or report.blocked or not report.candidates:
        return report

    benchmark = benchmark or benchmark_get_or_create(slug=slug, **(benchmark_details or {}))
    for candidate in report.candidates:
        metric = metric_create(
            name=candidate.name,
            criterion=candidate.criterion,
            polarity=candidate.polarity,
            subarea_slugs=candidate.subarea_slugs,
            label_category_slug=candidate.label_category_slug,
            rubric_notes=candidate.rubric_notes,
            age_contexts=candidate.age_contexts,
            source_kind=SourceKind.BENCHMARK,
            benchmark=benchmark,
            source_reference=candidate.source_reference
            or f"{filename or 'import'}, row {candidate.number}",
            created_by=created_by,
            change_note=f"Imported from {benchmark.name}.",
        )
        report.created_keys.append(metric.key)
    report.committed = True
    return report


def metrics_import_file(
    *,
    data: bytes | str,
    filename: str,
    benchmark_slug: str,
    benchmark_details: dict[str, str] | None = None,
    created_by: AbstractBaseUser | None,
    dry_run: bool = True,
    skip_bad_rows: bool = False,
) -> ImportReport:
    """Parse and import a CSV or JSON file in one call (the command and the form use this)."""
    file_format, rows, notes = import_file_parse(data=data, filename=filename)
    return metrics_import(
        rows=rows,
        benchmark_slug=benchmark_slug,
        benchmark_details=benchmark_details,
        created_by=created_by,
        file_format=file_format,
        filename=filename.rsplit("/", 1)[-1],
        dry_run=dry_run,
        skip_bad_rows=skip_bad_rows,
        notes=notes,
    )
