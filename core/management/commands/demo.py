"""Start the platform for a demo: migrate, seed, then a web server and a Celery worker (with
beat) together."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD


def demo_environment(*, host: str, port: int, environ: dict[str, str]) -> dict[str, str]:
    """The web server's and worker's environment: links in emails point at this demo's port,
    and pages are those a visitor sees (debug off). An explicit SITE_URL or DJANGO_DEBUG is kept.
    """
    environment = dict(environ)
    # A newcomer should meet the site's own 404 page, not Django's debug page listing every URL.
    environment.setdefault("DJANGO_DEBUG", "false")
    if not environ.get("SITE_URL"):
        link_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104
        environment["SITE_URL"] = f"http://{link_host}:{port}"
    return environment


class Command(BaseCommand):
    help = "Migrate, load demo data, and run the web server and a background worker until stopped."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker processes.")

    def handle(self, *args, host: str, port: int, concurrency: int, **options) -> None:
        self.stdout.write("Migrating the database…")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)  # in case CACHE_URL changed since
        self.stdout.write(
            "Loading demo data. The first time this includes a complete offline evaluation "
            "run, which takes a few minutes; later starts skip it."
        )
        call_command("seed_demo", verbosity=1, logins=False)
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        environment = demo_environment(host=host, port=port, environ=dict(os.environ))
        settings.SITE_URL = environment["SITE_URL"]
        worker = subprocess.Popen(  # noqa: S603 - fixed argument list
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "impactbench_site",
                "worker",
                "-Q",
                "default,llm",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "--hostname",
                "demo@%h",
                # Beat inside the worker (one process fewer for the demo): it runs the reaper
                # that recovers conversations of a worker that died and closes finished runs.
                "-B",
                "--schedule",
                settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ],
            cwd=settings.BASE_DIR,
            env=environment,
        )
        web = subprocess.Popen(  # noqa: S603 - fixed argument list
            [sys.executable, manage, "runserver", f"{host}:{port}", "--noreload"],
            cwd=settings.BASE_DIR,
            env=environment,
        )
        children = {worker: "Celery worker", web: "web server"}

        def stop(*_args) -> None:
            for child in children:
                if child.poll() is None:
                    child.terminate()
            for child in children:
                try:
                    child.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    child.kill()

        signal.signal(signal.SIGTERM, lambda *a: (stop(), sys.exit(0)))
        self.stdout.write(self.style.SUCCESS(f"\nImpactBench demo: http://{host}:{port}/"))
        self.stdout.write(f"Sign in with any of these (password {DEMO_PASSWORD!r}):")
        for account in DEMO_ACCOUNTS:
            roles = ", ".join(role.value for role in account.roles)
            self.stdout.write(f"  {account.email:<36} {roles}")
        self.stdout.write("Model output in the demo comes from the offline demo model, a stand-in.")
        self.stdout.write("Press Ctrl-C to stop.\n")
        try:
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
            exited = [name for child, name in children.items() if child.poll() is not None]
            self.stderr.write(f"Stopping: the {' and '.join(exited)} exited.")
        except KeyboardInterrupt:
            pass
        finally:
            stop()
