from django.conf import settings
from django.core.management.base import BaseCommand

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD, demo_accounts_seed
from llm.demo import demo_configurations_seed


class Command(BaseCommand):
    help = "Load demo accounts and demo data. Safe to re-run: keeps everything users created."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--no-logins", dest="logins", action="store_false", help="Do not print the logins."
        )

    def handle(self, *args, **options) -> None:
        created = demo_accounts_seed()
        self.stdout.write(
            f"Demo accounts: {len(created)} created, {len(DEMO_ACCOUNTS) - len(created)} kept."
        )
        for step in self.demo_steps():
            self.stdout.write(step())
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
        if options["verbosity"] > 0 and options["logins"]:
            self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r}):")
            for account in DEMO_ACCOUNTS:
                roles = ", ".join(role.value for role in account.roles)
                self.stdout.write(f"  {account.email:<36} {roles}")

    def demo_steps(self) -> list:
        """Seeding steps of the other apps, each returning a one-line report."""
        from evaluations.demo import (
            demo_rubric_items_seed,
            demo_run_seed,
            demo_scenarios_seed,
            demo_summaries_seed,
        )
        from metrics_registry.demo import demo_registry_seed, demo_release_seed
        from review.demo import demo_rating_queues_seed

        steps = [
            demo_configurations_seed,
            demo_registry_seed,
            demo_release_seed,
            demo_rubric_items_seed,
        ]
        if settings.DEMO_SEED_EVALUATIONS:
            # Last and slowest: a complete offline run, so results pages have data.
            steps += [demo_scenarios_seed, demo_run_seed, demo_summaries_seed]
        # After the content it samples from: each kind with something to rate gets a queue.
        steps.append(demo_rating_queues_seed)
        return steps
