import argparse
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter

from core.exceptions import ApplicationError
from core.files import file_read_limited
from metrics_registry.services import ImportReport, metrics_import_file
from metrics_registry.taxonomy import taxonomy_help_text


class _HelpWithTaxonomy(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Keeps the taxonomy listing's line breaks in --help."""


def report_lines(report: ImportReport) -> list[str]:
    lines = [*report.notes]
    lines += [
        f"Needs mapping, row {c.number}: {c.name} (no subareas or label category)"
        for c in report.needing_mapping
    ]
    label = "Skipped" if report.skip_bad_rows else "Bad"
    lines += [f"{label} row {p.number}: {p.reason}" for p in report.errors]
    lines += [f"Duplicate row {p.number}: {p.reason}" for p in report.duplicates]
    if report.dry_run:
        lines += [f"Would import row {c.number}: {c.name}" for c in report.candidates]
    lines += [f"Created {key}" for key in report.created_keys]
    return lines


# Far above any real taxonomy (5,000 rows of long text), far below what would strain memory.
MAX_COMMAND_IMPORT_BYTES = 20 * 1024 * 1024


class Command(BaseCommand):
    help = (
        "Import metrics from a CSV or JSON file of an existing benchmark or harm taxonomy. "
        "All-or-nothing unless --skip-bad-rows; re-importing the same file creates nothing new. "
        "Columns: name, criterion, polarity (required), subareas (separated by ;), "
        "label_category, rubric_notes, age_contexts, source_reference, weight (the source's own "
        'weight). JSON may add "source_weights": {"metric name": weight}.'
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = _HelpWithTaxonomy
        parser.epilog = taxonomy_help_text()
        return parser

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--benchmark", required=True, help="Benchmark slug, e.g. companion-harms"
        )
        parser.add_argument("--benchmark-name", default="")
        parser.add_argument("--citation", default="")
        parser.add_argument("--url", default="")
        parser.add_argument("--license", default="")
        parser.add_argument("--description", default="")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report only.")
        parser.add_argument(
            "--skip-bad-rows", action="store_true", help="Import the good rows, report the bad."
        )
        parser.add_argument("--created-by", default="", help="Email of the importing user.")

    def handle(self, *args, **options) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        created_by = None
        if options["created_by"]:
            created_by = (
                get_user_model().objects.filter(email__iexact=options["created_by"]).first()
            )
            if created_by is None:
                raise CommandError(f"No user with email {options['created_by']}.")
        try:
            report = metrics_import_file(
                data=file_read_limited(path, max_bytes=MAX_COMMAND_IMPORT_BYTES),
                filename=path.name,
                benchmark_slug=options["benchmark"],
                benchmark_details={
                    "name": options["benchmark_name"],
                    "citation": options["citation"],
                    "url": options["url"],
                    "license": options["license"],
                    "description": options["description"],
                },
                created_by=created_by,
                dry_run=options["dry_run"],
                skip_bad_rows=options["skip_bad_rows"],
            )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        for line in report_lines(report):
            self.stdout.write(line)
        if report.blocked:
            raise CommandError(report.summary)
        self.stdout.write(self.style.SUCCESS(report.summary))
