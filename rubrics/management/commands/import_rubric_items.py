from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.exceptions import ApplicationError
from core.files import file_read_limited
from rubrics.services.imports import (
    FORMATS,
    MAX_IMPORT_LINES,
    RubricImportReport,
    rubric_items_import,
)

# 10,000 items with long conversations fit well within this; a larger file is refused early.
MAX_COMMAND_IMPORT_BYTES = 64 * 1024 * 1024


def report_lines(report: RubricImportReport) -> list[str]:
    label = "Skipped" if report.skip_bad_lines else "Bad"
    lines = [f"{label} line {p.line}: {p.reason}" for p in report.errors]
    lines += [f"Duplicate line {p.line}: {p.reason}" for p in report.duplicates]
    if report.dry_run:
        lines += [f"Would import line {c.line}: {c.key}" for c in report.candidates]
    lines += [f"Created {key}" for key in report.created_keys]
    return lines


class Command(BaseCommand):
    help = (
        "Import rubric items (a conversation ending in a user message plus weighted criteria) "
        "from a JSON Lines file: the platform's own lines or HealthBench's oss_eval.jsonl rows "
        "unchanged (detected, or --format healthbench). All-or-nothing unless --skip-bad-lines; "
        "existing keys are left alone, so re-importing the same file creates nothing new."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--dry-run", action="store_true", help="Validate and report only.")
        parser.add_argument(
            "--skip-bad-lines", action="store_true", help="Import the good lines, report the bad."
        )
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default="auto",
            help="auto (default) detects HealthBench rows by their prompt_id and rubrics fields.",
        )

    def handle(self, *args, **options) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        try:
            report = rubric_items_import(
                data=file_read_limited(
                    path, max_bytes=MAX_COMMAND_IMPORT_BYTES, max_lines=MAX_IMPORT_LINES
                ),
                dry_run=options["dry_run"],
                skip_bad_lines=options["skip_bad_lines"],
                fmt=options["format"],
            )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self.stdout.write(f"Format: {report.format}")
        for line in report_lines(report):
            self.stdout.write(line)
        if report.blocked:
            raise CommandError(report.summary)
        self.stdout.write(self.style.SUCCESS(report.summary))
