"""Importing an existing benchmark or harm taxonomy into the metric template.

A file goes through three steps: parse (rows with the numbers a person sees), validate (a clear
reason per bad row), then write everything or nothing — unless the user asks to skip bad rows.
Duplicates, within the file or of metrics already imported from the same benchmark, are
reported and left out, so importing the same file twice creates nothing the second time.
"""

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.exceptions import ApplicationError

from ...models import Benchmark, LabelCategory, SourceKind, Subarea
from ..metrics import benchmark_get_or_create, metric_create
from .parsing import IMPORT_COLUMNS, REQUIRED_COLUMNS, ImportRow, import_file_parse
from .validation import (
    ImportCandidate,
    Vocabulary,
    criterion_key,
    existing_criteria,
    row_validate,
)

__all__ = [
    "IMPORT_COLUMNS",
    "REQUIRED_COLUMNS",
    "ImportCandidate",
    "ImportProblem",
    "ImportReport",
    "ImportRow",
    "import_file_parse",
    "metrics_import",
    "metrics_import_file",
]


@dataclass(frozen=True)
class ImportProblem:
    number: int
    reason: str


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
    def needing_mapping(self) -> list[ImportCandidate]:
        return [c for c in self.candidates if c.needs_mapping]

    @property
    def blocked(self) -> bool:
        """Bad rows stop the whole import unless the user chose to skip them."""
        return bool(self.errors) and not self.skip_bad_rows

    @property
    def skipped(self) -> list[ImportProblem]:
        return self.errors if self.skip_bad_rows else []

    @property
    def summary(self) -> str:
        counts = ngettext(
            "%(total)d row: %(new)d new, %(duplicates)d duplicates, %(bad)d bad",
            "%(total)d rows: %(new)d new, %(duplicates)d duplicates, %(bad)d bad",
            self.total_rows,
        ) % {
            "total": self.total_rows,
            "new": len(self.candidates),
            "duplicates": len(self.duplicates),
            "bad": len(self.errors),
        }
        unmapped = len(self.needing_mapping)
        if unmapped:
            counts = _(
                "%(counts)s; %(unmapped)d need mapping onto the taxonomy before a release"
            ) % {
                "counts": counts,
                "unmapped": unmapped,
            }
        if self.committed:
            values = {
                "created": len(self.created_keys),
                "skipped": len(self.skipped),
                "counts": counts,
            }
            if self.skipped:
                return (
                    ngettext(
                        "Imported %(created)d metric, %(skipped)d bad rows skipped (%(counts)s).",
                        "Imported %(created)d metrics, %(skipped)d bad rows skipped (%(counts)s).",
                        values["created"],
                    )
                    % values
                )
            return (
                ngettext(
                    "Imported %(created)d metric (%(counts)s).",
                    "Imported %(created)d metrics (%(counts)s).",
                    values["created"],
                )
                % values
            )
        if self.blocked:
            return ngettext(
                "Nothing imported: fix the %(bad)d bad row or choose to skip it (%(counts)s).",
                "Nothing imported: fix the %(bad)d bad rows or choose to skip them (%(counts)s).",
                len(self.errors),
            ) % {"bad": len(self.errors), "counts": counts}
        if self.dry_run:
            return ngettext(
                "Dry run: %(count)d metric would be imported (%(counts)s).",
                "Dry run: %(count)d metrics would be imported (%(counts)s).",
                len(self.candidates),
            ) % {"count": len(self.candidates), "counts": counts}
        return _("Nothing to import (%(counts)s).") % {"counts": counts}


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
        raise ApplicationError(_("Name the benchmark the metrics come from (a short identifier)."))
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
        report.notes.append(_('Benchmark "%(slug)s" is new and will be created.') % {"slug": slug})
    subareas = Vocabulary(
        list(Subarea.objects.values_list("slug", "name")),
        kind=_("subarea"),
        plural=_("subareas"),
    )
    categories = Vocabulary(
        list(LabelCategory.objects.values_list("slug", "name")),
        kind=_("label category"),
        plural=_("label categories"),
    )
    existing = existing_criteria(benchmark)
    seen_in_file: dict[str, int] = {}

    for row in rows:
        result = row_validate(row, subareas, categories)
        if isinstance(result, str):
            report.errors.append(ImportProblem(row.number, result))
            continue
        folded = criterion_key(result.criterion)
        if folded in seen_in_file:
            report.duplicates.append(
                ImportProblem(row.number, f"same criterion as row {seen_in_file[folded]}")
            )
            continue
        seen_in_file[folded] = row.number
        if folded in existing:
            report.duplicates.append(
                ImportProblem(row.number, f"already imported as {existing[folded]}")
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
            change_note=f"Imported from {benchmark.name}."
            + (" Needs mapping onto the taxonomy." if candidate.needs_mapping else ""),
            unmapped_allowed=True,
            source_weight=candidate.weight,
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
