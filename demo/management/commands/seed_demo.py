from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD, demo_accounts_seed
from core.seed_steps import SeedStep
from demo.progress import SeedTracker
from demo.seeding import demo_seed_run, demo_seed_steps


class Command(BaseCommand):
    help = "Load demo accounts and demo data. Safe to re-run: keeps everything users created."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--no-logins", dest="logins", action="store_false", help="Do not print the logins."
        )
        parser.add_argument(
            "--record-progress",
            action="store_true",
            help="Record progress for the web server's seeding banner (`manage.py demo`).",
        )

    def handle(self, *args, **options) -> None:
        created = demo_accounts_seed()
        self.stdout.write(
            f"Demo accounts: {len(created)} created, {len(DEMO_ACCOUNTS) - len(created)} kept."
        )
        steps = demo_seed_steps()
        bar: tqdm | None = None

        def on_step(step: SeedStep) -> None:
            nonlocal bar
            if bar is not None:
                bar.close()
                bar = None
            if step.counts:  # disable=None: a bar on a terminal, silence in logs
                bar = tqdm(desc=f"Demo {step.label}", unit=step.unit, disable=None)

        def on_count(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.n = done
                bar.refresh()

        tracker = SeedTracker(
            steps=len(steps), record=options["record_progress"], on_count=on_count
        )
        try:
            demo_seed_run(
                tracker,
                steps,
                on_step=on_step,
                on_report=lambda _step, report: tqdm.write(report, file=self.stdout._out),
            )
        except Exception as error:
            raise CommandError(f"Seeding the demo stopped: {error}") from error
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
        if options["verbosity"] > 0 and options["logins"]:
            self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r}):")
            for account in DEMO_ACCOUNTS:
                roles = ", ".join(role.value for role in account.roles)
                self.stdout.write(f"  {account.email:<36} {roles}")
