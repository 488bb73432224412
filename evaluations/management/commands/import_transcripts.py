"""Import transcripts into a new run and judge them (no simulation), with a progress bar.

manage.py import_transcripts chats.jsonl --format openai_jsonl --metric IB-0001 \\
    --run-name "Support bot logs, May" --model "support-bot-v3"
manage.py import_transcripts impactbench-run-12.jsonl --format run_export --run-name "Re-judged"
manage.py import_transcripts logs/2025-05-01.eval --format inspect_log --metric IB-0001 --inline
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _
from tqdm import tqdm

from core.exceptions import ApplicationError
from evaluations.models import AgeContext, EvaluationRun, RunStatus, TranscriptFormat
from evaluations.services import runs
from evaluations.services.run_setup import metric_versions_from_names
from evaluations.services.transcript_import import MAX_FILE_BYTES
from evaluations.services.transcript_runs import transcripts_import
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import configuration_for_role
from metrics_registry.models import Release


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class Command(BaseCommand):
    help = "Import a file of transcripts into a new run and judge them, without simulating."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="The JSONL file, the run export or the Inspect log.")
        parser.add_argument("--format", required=True, choices=TranscriptFormat.values)
        parser.add_argument(
            "--metric",
            action="append",
            default=[],
            help="Metric key to judge conversations that name none on (current version); "
            "repeat or separate with commas for several.",
        )
        parser.add_argument("--run-name", required=True)
        parser.add_argument(
            "--model", default="", help="The model that answered, when lines do not name it."
        )
        parser.add_argument("--judge", help="Judge configuration name (default: role default).")
        parser.add_argument(
            "--judges",
            default="",
            help="A panel: comma-separated judge configuration names, each making --judgments "
            "readings; the verdict is the majority of the judges' (instead of --judge).",
        )
        parser.add_argument("--judgments", type=int, default=3)
        parser.add_argument("--release", help="Release version the run belongs to, if any.")
        parser.add_argument("--age-context", default=AgeContext.ADULT, choices=AgeContext.values)
        parser.add_argument("--language", default="en")
        parser.add_argument(
            "--inline", action="store_true", help="Judge here instead of on Celery workers."
        )

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(_("There is no file %(path)s.") % {"path": path})
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CommandError(
                _("The file has more than %(limit)d MB; split it.")
                % {"limit": MAX_FILE_BYTES // 1024 // 1024}
            )
        try:
            run = self._import(path, options)
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self.stdout.write(
            _("Run %(run)s: %(count)d imported conversations to judge.")
            % {"run": run.pk, "count": run.conversations_total}
        )
        if options["inline"]:
            self._judge_inline(run)

    def _import(self, path: Path, options) -> EvaluationRun:
        panel = [self._configuration(name) for name in _split(options["judges"])]
        if panel and options["judge"]:
            raise CommandError(_("Name one judge or a panel of judges, not both."))
        if panel:
            judge = panel[0]
        elif options["judge"]:
            judge = self._configuration(options["judge"])
        else:
            judge = configuration_for_role(ModelRole.JUDGE)
        release = None
        if options["release"]:
            release = Release.objects.filter(version=options["release"]).first()
            if release is None:
                raise CommandError(_("There is no release %(v)s.") % {"v": options["release"]})
        keys = [key for value in options["metric"] for key in _split(value)]
        versions = metric_versions_from_names(metric_keys=keys) if keys else []
        bar = tqdm(unit="conv", desc=_("import"), file=self.stdout, dynamic_ncols=True)

        def tick(done: int, total: int, _stage: str = "") -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            return transcripts_import(
                data=path.read_bytes(),
                file_name=path.name,
                format=options["format"],
                run_name=options["run_name"],
                judge=judge,
                metric_versions=versions,
                judgments_per_conversation=options["judgments"],
                further_judges=[(seat, options["judgments"]) for seat in panel[1:]],
                release=release,
                model_name=options["model"],
                age_context=options["age_context"],
                language=options["language"],
                dispatch=not options["inline"],
                on_progress=tick,
            )
        finally:
            bar.close()

    def _configuration(self, name: str) -> ModelConfiguration:
        configuration = ModelConfiguration.objects.filter(name=name).first()
        if configuration is None:
            raise CommandError(_("No model configuration is named “%(name)s”.") % {"name": name})
        return configuration

    def _judge_inline(self, run: EvaluationRun) -> None:
        bar = tqdm(
            total=run.conversations_total,
            unit="conv",
            desc=_("judge"),
            file=self.stdout,
            dynamic_ncols=True,
        )

        def tick(done: int, _total: int, _stage: str = "") -> None:
            bar.n = done
            bar.refresh()

        try:
            # No worker to count on here: the run's figures are stored before this returns.
            runs.run_process_inline(run_id=run.pk, on_progress=tick, no_worker=True)
        finally:
            bar.close()
        run.refresh_from_db()
        style = self.style.SUCCESS if run.status == RunStatus.COMPLETED else self.style.WARNING
        self.stdout.write(
            style(
                _("Run %(run)s is %(status)s: %(done)d conversations judged, %(failed)d failed.")
                % {
                    "run": run.pk,
                    "status": run.get_status_display().lower(),
                    "done": run.conversations_completed,
                    "failed": run.conversations_failed,
                }
            )
        )
