"""Write the scenarios a run needs, from the terminal, with a progress bar.

manage.py generate_scenarios --run 12              # every metric of the run lacking a set
manage.py generate_scenarios --release 1.0.0
manage.py generate_scenarios --metrics IB-M-00001,IB-M-00002

The same service as "Generate missing scenarios" on a metric's scenario list (the web queues it
for a worker; this runs it here), so the scenarios are the same: written by the scenario-writer
configuration, active, open to the same review and edits. Complete sets are left alone; a run
stopped half way resumes where it stopped.
"""

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _
from tqdm import tqdm

from core.exceptions import ApplicationError
from evaluations.selectors import scenario_set_complete
from evaluations.services.run_setup import metric_versions_from_names
from evaluations.services.scenarios import scenarios_generate


class Command(BaseCommand):
    help = "Generate the missing scenarios of a run's, a release's or some metrics' versions."

    def add_arguments(self, parser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--run", type=int, help="Every metric version of this run.")
        what.add_argument("--release", help="Every metric version of this release, e.g. 1.0.0.")
        what.add_argument("--metrics", help="Comma-separated metric keys (current versions).")

    def handle(self, *args, **options) -> None:
        keys = [k.strip() for k in (options["metrics"] or "").split(",") if k.strip()]
        try:
            versions = metric_versions_from_names(
                run_id=options["run"], release_version=options["release"], metric_keys=keys
            )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        missing = [v for v in versions if not scenario_set_complete(metric_version=v)]
        self.stdout.write(
            _("%(missing)d of %(total)d metric versions lack a complete set of scenarios.")
            % {"missing": len(missing), "total": len(versions)}
        )
        written = 0
        for version in missing:
            # disable=None: a bar on a terminal, silence in logs.
            bar = tqdm(desc=version.metric.key, unit="scenario", file=self.stdout, disable=None)

            def on_progress(done: int, total: int, _stage: str = "", bar=bar) -> None:
                bar.total = total
                bar.n = done
                bar.refresh()

            try:
                scenarios = scenarios_generate(metric_version=version, on_progress=on_progress)
            except ApplicationError as error:
                raise CommandError(
                    _(
                        "%(key)s: %(reason)s What was written is kept: run the command again "
                        "to resume."
                    )
                    % {"key": version.metric.key, "reason": error.message}
                ) from error
            finally:
                bar.close()
            written += 1
            self.stdout.write(
                _("%(key)s: %(count)d scenarios.")
                % {"key": version.metric.key, "count": len(scenarios)}
            )
        self.stdout.write(
            self.style.SUCCESS(
                _("Done: %(written)d metric versions now have their scenarios.")
                % {"written": written}
            )
        )
