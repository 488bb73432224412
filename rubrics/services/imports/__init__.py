"""Importing rubric items from JSON Lines: the platform's own lines or HealthBench's rows.

One JSON object per line, in either format (see `native` and `healthbench`); the format is
detected from the first row that parses, or named (`fmt="healthbench"`). Like the metric
import: parse, validate with a reason per bad line (line numbers as an editor shows them), then
write everything or nothing unless bad lines are to be skipped. An item whose key already
exists is reported as a duplicate and left alone, so re-importing a file is harmless.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked

from ...models import RubricCriterion, RubricItem
from .healthbench import healthbench_line_validate, looks_like_healthbench
from .native import native_line_validate
from .rows import DimensionVocabulary, RubricCriterionCandidate, RubricItemCandidate

MAX_IMPORT_LINES = 10_000
FORMATS = ("auto", "impactbench", "healthbench")

__all__ = [
    "FORMATS",
    "RubricCriterionCandidate",
    "RubricImportProblem",
    "RubricImportReport",
    "RubricItemCandidate",
    "rubric_items_import",
    "rubric_jsonl_parse",
]


@dataclass(frozen=True)
class RubricImportProblem:
    line: int
    reason: str


@dataclass
class RubricImportReport:
    dry_run: bool
    skip_bad_lines: bool
    total_lines: int = 0
    candidates: list[RubricItemCandidate] = field(default_factory=list)
    errors: list[RubricImportProblem] = field(default_factory=list)
    duplicates: list[RubricImportProblem] = field(default_factory=list)
    created_keys: list[str] = field(default_factory=list)
    committed: bool = False
    format: str = "impactbench"

    @property
    def blocked(self) -> bool:
        return bool(self.errors) and not self.skip_bad_lines

    @property
    def summary(self) -> str:
        counts = ngettext(
            "%(total)d line: %(new)d new, %(duplicates)d duplicates, %(bad)d bad",
            "%(total)d lines: %(new)d new, %(duplicates)d duplicates, %(bad)d bad",
            self.total_lines,
        ) % {
            "total": self.total_lines,
            "new": len(self.candidates),
            "duplicates": len(self.duplicates),
            "bad": len(self.errors),
        }
        if self.committed:
            values = {
                "created": len(self.created_keys),
                "skipped": len(self.errors),
                "counts": counts,
            }
            if self.errors:
                return (
                    ngettext(
                        "Imported %(created)d rubric item, %(skipped)d bad lines skipped "
                        "(%(counts)s).",
                        "Imported %(created)d rubric items, %(skipped)d bad lines skipped "
                        "(%(counts)s).",
                        values["created"],
                    )
                    % values
                )
            return (
                ngettext(
                    "Imported %(created)d rubric item (%(counts)s).",
                    "Imported %(created)d rubric items (%(counts)s).",
                    values["created"],
                )
                % values
            )
        if self.blocked:
            return ngettext(
                "Nothing imported: fix the %(bad)d bad line or choose to skip it (%(counts)s).",
                "Nothing imported: fix the %(bad)d bad lines or choose to skip them (%(counts)s).",
                len(self.errors),
            ) % {"bad": len(self.errors), "counts": counts}
        if self.dry_run:
            return ngettext(
                "Dry run: %(count)d rubric item would be imported (%(counts)s).",
                "Dry run: %(count)d rubric items would be imported (%(counts)s).",
                len(self.candidates),
            ) % {"count": len(self.candidates), "counts": counts}
        return _("Nothing to import (%(counts)s).") % {"counts": counts}


def rubric_jsonl_parse(data: bytes | str) -> list[tuple[int, Any]]:
    """(line number, decoded JSON or the JSON error) for every non-blank line."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ApplicationError(
                _("The file is not UTF-8 text (byte %(byte)s); save it as UTF-8 JSON Lines.")
                % {"byte": error.start}
            ) from error
    _single_document_check(data)
    rows: list[tuple[int, Any]] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((number, json_loads_checked(raw)))
        except ApplicationError as error:
            rows.append((number, error))
    if not rows:
        raise ApplicationError(_("The file has no rubric items (one JSON object per line)."))
    if len(rows) > MAX_IMPORT_LINES:
        raise ApplicationError(
            _("The file has %(count)s lines; split it into files of at most %(max_import_lines)s.")
            % {"count": len(rows), "max_import_lines": MAX_IMPORT_LINES}
        )
    return rows


JSON_LINES_HINT = gettext_lazy(
    "Put each item on a line of its own: `jq -c '.[]' file.json > file.jsonl` for an array, "
    "`jq -c . file.json > file.jsonl` for pretty-printed objects."
)


def _single_document_check(data: str) -> None:
    """One clear message for a JSON document (an array, or pretty-printed objects), rather
    than one "not valid JSON" per line of it."""
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        return
    first = lines[0].strip()
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, RecursionError):
        document = None
    if isinstance(document, list):
        raise ApplicationError(
            _("The file is one JSON array of %(count)d entries, not JSON Lines. %(hint)s")
            % {"count": len(document), "hint": JSON_LINES_HINT}
        )
    if (document is not None and len(lines) > 1) or first in ("{", "["):
        raise ApplicationError(
            _("The file is pretty-printed JSON spread over several lines, not JSON Lines. %(hint)s")
            % {"hint": JSON_LINES_HINT}
        )


def _detect_format(rows: list[tuple[int, Any]], fmt: str) -> str:
    if fmt not in FORMATS:
        raise ApplicationError(
            _('Unknown format "%(fmt)s": use %(items)s.')
            % {"fmt": fmt, "items": ", ".join(FORMATS)}
        )
    if fmt != "auto":
        return fmt
    first = next((row for _, row in rows if isinstance(row, dict)), None)
    return "healthbench" if looks_like_healthbench(first) else "impactbench"


@transaction.atomic
def rubric_items_import(
    *,
    data: bytes | str,
    dry_run: bool = True,
    skip_bad_lines: bool = False,
    fmt: str = "auto",
) -> RubricImportReport:
    """Validate a JSONL file of rubric items and, unless dry or blocked, create them."""
    rows = rubric_jsonl_parse(data)
    report = RubricImportReport(
        dry_run=dry_run,
        skip_bad_lines=skip_bad_lines,
        total_lines=len(rows),
        format=_detect_format(rows, fmt),
    )
    validate = healthbench_line_validate if report.format == "healthbench" else native_line_validate
    vocabulary = DimensionVocabulary()
    existing = set(RubricItem.objects.values_list("key", flat=True))
    seen: dict[str, int] = {}
    for number, decoded in rows:
        if isinstance(decoded, ApplicationError):
            report.errors.append(RubricImportProblem(number, decoded.message))
            continue
        result = (
            validate(number, decoded, vocabulary)
            if isinstance(decoded, dict)
            else "the line is not a JSON object"
        )
        if isinstance(result, str):
            report.errors.append(RubricImportProblem(number, result))
        elif result.key in seen:
            report.duplicates.append(
                RubricImportProblem(
                    number,
                    _("same key %(key)s as line %(line)s")
                    % {"key": result.key, "line": seen[result.key]},
                )
            )
        elif result.key in existing:
            report.duplicates.append(
                RubricImportProblem(
                    number,
                    _("rubric item %(key)s already exists") % {"key": result.key},
                )
            )
        else:
            seen[result.key] = number
            report.candidates.append(result)

    if dry_run or report.blocked or not report.candidates:
        return report
    for candidate in report.candidates:
        item = RubricItem.objects.create(
            key=candidate.key,
            title=candidate.title,
            messages=candidate.messages,
            acuity=candidate.acuity,
            population=candidate.population,
            language=candidate.language,
            country=candidate.country,
            source=candidate.source,
            source_format=candidate.source_format,
            external_id=candidate.external_id,
            metadata=candidate.metadata,
        )
        RubricCriterion.objects.bulk_create(
            RubricCriterion(
                item=item,
                position=position,
                text=criterion.text,
                points=criterion.points,
                dimension=criterion.dimension,
                tags=list(criterion.tags),
                country=criterion.country,
                origin=candidate.origin,
            )
            for position, criterion in enumerate(candidate.criteria)
        )
        report.created_keys.append(item.key)
    report.committed = True
    return report
