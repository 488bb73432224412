from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import ApplicationError
from core.workers import worker_ping_roundtrip


class Command(BaseCommand):
    help = "Send a task through the broker and wait until a Celery worker has run it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--timeout", type=float, default=60.0)

    def handle(self, *args: Any, timeout: float, **options: Any) -> None:
        try:
            ping = worker_ping_roundtrip(timeout_seconds=timeout)
        except ApplicationError as error:
            raise CommandError(error.message) from error
        delay = (ping.answered_at - ping.requested_at).total_seconds()
        self.stdout.write(f"Worker {ping.worker_hostname} answered in {delay:.2f} s.")
