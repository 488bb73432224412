"""Machine-translate the scenarios of some metrics into another language, from the terminal.

manage.py translate_scenarios --metrics IB-M-00001,IB-M-00002 --language es --country ES
manage.py translate_scenarios --release 1.0.0 --language es-MX

The same service as "Translate" on a scenario's page: the scenario writer translates each
active scenario in the default language that has no variant in the language yet. Translations
are recorded as machine translations, so they stay out of runs until an expert reviewer who
reads the language has reviewed each on its page. Re-running translates only what is missing.
"""

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from evaluations.services.run_setup import metric_versions_from_names
from evaluations.services.translation import scenarios_translate


class Command(BaseCommand):
    help = "Machine-translate the scenarios of a run's, a release's or some metrics' versions."

    def add_arguments(self, parser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--run", type=int, help="Every metric version of this run.")
        what.add_argument("--release", help="Every metric version of this release, e.g. 1.0.0.")
        what.add_argument("--metrics", help="Comma-separated metric keys (current versions).")
        parser.add_argument("--language", required=True, help="BCP 47 tag, e.g. es or es-MX.")
        parser.add_argument(
            "--country", help="Where the translated personas live (ISO code); default: kept."
        )

    def handle(self, *args, **options) -> None:
        keys = [k.strip() for k in (options["metrics"] or "").split(",") if k.strip()]
        try:
            versions = metric_versions_from_names(
                run_id=options["run"], release_version=options["release"], metric_keys=keys
            )
            written = 0
            for version in versions:
                made = scenarios_translate(
                    metric_version=version,
                    language=options["language"],
                    country=options["country"],
                )
                written += len(made)
                self.stdout.write(
                    _("%(key)s: %(count)d scenarios translated.")
                    % {"key": version.metric.key, "count": len(made)}
                )
        except ApplicationError as error:
            raise CommandError(
                _("%(reason)s What was translated is kept: run the command again to resume.")
                % {"reason": error.message}
            ) from error
        self.stdout.write(
            self.style.SUCCESS(
                _(
                    "Done: %(count)d machine translations written; each runs once an expert "
                    "reviewer who reads the language has reviewed it."
                )
                % {"count": written}
            )
        )
