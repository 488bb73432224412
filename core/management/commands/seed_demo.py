from django.core.management.base import BaseCommand

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD, demo_accounts_seed
from llm.demo import demo_configurations_seed


class Command(BaseCommand):
    help = "Load demo accounts and demo data. Safe to re-run: keeps everything users created."

    def handle(self, *args, **options) -> None:
        created = demo_accounts_seed()
        self.stdout.write(
            f"Demo accounts: {len(created)} created, {len(DEMO_ACCOUNTS) - len(created)} kept."
        )
        for step in self.demo_steps():
            self.stdout.write(step())
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
        if options["verbosity"] > 0:
            self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r}):")
            for account in DEMO_ACCOUNTS:
                roles = ", ".join(role.value for role in account.roles)
                self.stdout.write(f"  {account.email:<36} {roles}")

    def demo_steps(self) -> list:
        """Seeding steps of the other apps, each returning a one-line report."""
        from metrics_registry.demo import demo_registry_seed

        return [demo_configurations_seed, demo_registry_seed]
