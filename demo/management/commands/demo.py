"""Start the platform for a demo: migrate and create the demo accounts, then a web server, a
Celery worker (with beat) and the rest of the demo seed in the background, together.

Pages are served as soon as migrations are done; the seed (`seed_demo --record-progress`) runs
in its own process, so the web server answers while it works, and every page shows how far it
has got until it is done. The worker starts once the web server answers. A seed that stops is
resumed by the next start (every step is idempotent).
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from tqdm import tqdm

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD, demo_accounts_seed
from demo.progress import (
    COMPLETE,
    SeedProgress,
    progress_mark_failed,
    progress_read,
    progress_write,
)


def _link_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104


def _lower_priority() -> None:
    os.nice(5)


def server_answers(url: str, *, timeout: float = 2.0) -> bool:
    """Whether a GET of the URL answers 200 now (not merely whether the port is bound)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - http only
            return response.status == 200
    except (OSError, ValueError):  # refused, reset, timed out, an HTTP error status
        return False


def wait_until_serving(
    url: str,
    *,
    timeout: float,
    alive: Callable[[], bool] = lambda: True,
    tick: Callable[[], None] | None = None,
    interval: float = 0.25,
) -> bool:
    """Poll the URL until it answers; False when `alive()` turns false or time runs out.

    `tick` runs between polls (the terminal's progress bar keeps moving while we wait).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            return False
        if server_answers(url):
            return True
        if tick is not None:
            tick()
        time.sleep(interval)
    return False


class SeedWatcher:
    """Shows the background seed in the terminal: a bar per step from its progress file, each
    step's report line, and how it ended."""

    def __init__(self, process: subprocess.Popen, log: Path, stdout) -> None:
        self.process, self.log, self.stdout = process, log, stdout
        self.bar: tqdm | None = None
        self.step_index = 0
        self.reported = 0
        self.done = False

    def write(self, text: str) -> None:
        tqdm.write(text, file=self.stdout)

    def poll(self) -> None:
        if self.done:
            return
        progress = progress_read()
        if progress is not None and progress.pid == self.process.pid:
            self._show(progress)
        code = self.process.poll()
        if code is None:
            return
        self.done = True
        if self.bar is not None:
            self.bar.close()
        progress = progress_read()
        if code == 0 and progress is not None and progress.state == COMPLETE:
            self._show(progress)
            self.write("Demo data is ready.")
            return
        progress_mark_failed(f"the seeding process exited with code {code}")
        tail = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        self.write("\n".join(["Seeding the demo data stopped:", *tail]))
        self.write(f"Full log: {self.log}. Run `make demo` again to resume where it stopped.")

    def _show(self, progress: SeedProgress) -> None:
        for line in progress.reports[self.reported :]:
            self.write(line)
        self.reported = len(progress.reports)
        if progress.step_index != self.step_index and progress.step_index:
            if self.bar is not None:
                self.bar.close()
            self.step_index = progress.step_index
            # disable=None: a bar on a terminal, silence in logs (CI).
            self.bar = tqdm(
                desc=f"Seeding {progress.label} ({progress.step_index}/{progress.steps})",
                unit=progress.unit.split()[0] if progress.unit else "it",
                file=self.stdout,
                disable=None,
            )
        if self.bar is not None and progress.total:
            self.bar.total, self.bar.n = progress.total, progress.done
            self.bar.refresh()


# Stopping (Ctrl-C, SIGTERM): every child is asked at once, and the whole wait is bounded.
# The web server and the seed stop at once; the worker finishes the task in hand for at most
# STOP_GRACE_SECONDS, then stops cold (its tasks are acknowledged late and idempotent, so the
# next start runs them again), and whatever is left after STOP_COLD_SECONDS is killed with its
# process group (the worker's pool processes with it).
STOP_GRACE_SECONDS = 2.0
STOP_COLD_SECONDS = 1.5


def _wait_all(children: Iterable[subprocess.Popen], seconds: float) -> list[subprocess.Popen]:
    """Wait for the children together until `seconds` pass; those still running."""
    deadline = time.monotonic() + seconds
    running = [child for child in children if child.poll() is None]
    while running and time.monotonic() < deadline:
        time.sleep(0.05)
        running = [child for child in running if child.poll() is None]
    return running


def _signal(child: subprocess.Popen, signum: int, *, group: bool = False) -> None:
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(child.pid, signum)
        else:
            child.send_signal(signum)


def children_stop(
    children: Iterable[subprocess.Popen],
    *,
    workers: Iterable[subprocess.Popen] = (),
    grace: float = STOP_GRACE_SECONDS,
    cold_wait: float = STOP_COLD_SECONDS,
) -> None:
    """Stop the children in parallel within about `grace` + `cold_wait` seconds: SIGTERM to
    all; then SIGQUIT (Celery's cold shutdown) to the `workers` still running; then SIGKILL to
    whatever is left. Each of `workers` leads a process group of its own, killed whole at the
    end (its pool processes, even if the worker itself is already gone)."""
    children, workers = list(children), list(workers)
    for child in children:
        if child.poll() is None:
            _signal(child, signal.SIGTERM)
    running = _wait_all(children, grace)
    cold = [child for child in workers if child in running]
    for child in cold:
        _signal(child, signal.SIGQUIT)
    if cold:
        running = _wait_all(running, cold_wait)
    for child in children:
        if child in workers:
            _signal(child, signal.SIGKILL, group=True)
        elif child in running:
            _signal(child, signal.SIGKILL)
    _wait_all(children, 5.0)


def demo_environment(*, host: str, port: int, environ: dict[str, str]) -> dict[str, str]:
    """The web server's and worker's environment: links in emails point at this demo's port,
    and pages are those a visitor sees (debug off). An explicit SITE_URL or DJANGO_DEBUG is kept.
    """
    environment = dict(environ)
    # A newcomer should meet the site's own 404 page, not Django's debug page listing every URL.
    environment.setdefault("DJANGO_DEBUG", "false")
    if not environ.get("SITE_URL"):
        environment["SITE_URL"] = f"http://{_link_host(host)}:{port}"
    return environment


class Command(BaseCommand):
    help = (
        "Migrate, create the demo accounts, and run the web server, a background worker and "
        "the demo seed until stopped."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker processes.")

    def handle(self, *args, host: str, port: int, concurrency: int, **options) -> None:
        started = time.monotonic()
        self.stdout.write("Migrating the database…")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("createcachetable", verbosity=0)  # in case CACHE_URL changed since
        created = demo_accounts_seed()
        self.stdout.write(
            f"Demo accounts: {len(created)} created, {len(DEMO_ACCOUNTS) - len(created)} kept "
            f"(database ready in {time.monotonic() - started:.1f} s)."
        )
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        environment = demo_environment(host=host, port=port, environ=dict(os.environ))
        settings.SITE_URL = environment["SITE_URL"]
        # The banner shows from the very first page; the seed takes the file over when it starts.
        progress_write(SeedProgress(pid=os.getpid()))
        log = Path(settings.VAR_DIR) / "demo-seed.log"
        with log.open("w", encoding="utf-8") as log_file:
            seed = subprocess.Popen(  # noqa: S603 - fixed argument list
                [sys.executable, manage, "seed_demo", "--no-logins", "--record-progress"],
                cwd=settings.BASE_DIR,
                env=environment,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                # Behind the web server and the worker: pages stay quick while it works.
                preexec_fn=_lower_priority,
            )
        self.stdout.write(
            "Seeding the demo data in the background (the first time a complete offline "
            f"evaluation run; later starts keep it). Log: {log}"
        )
        worker_command = [
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
        ]
        web = subprocess.Popen(  # noqa: S603 - fixed argument list
            # migrate ran the system checks a moment ago
            [sys.executable, manage, "runserver", f"{host}:{port}", "--noreload", "--skip-checks"],
            cwd=settings.BASE_DIR,
            env=environment,
        )
        children = {web: "web server"}
        watcher = SeedWatcher(seed, log, self.stdout._out)

        workers: list[subprocess.Popen] = []

        def start_worker() -> None:
            worker = subprocess.Popen(  # noqa: S603 - fixed argument list
                worker_command,
                cwd=settings.BASE_DIR,
                env=environment,
                # A process group of its own: Ctrl-C reaches it only through `stop` (one
                # shutdown, not the terminal's second signal turning warm into cold), and its
                # pool processes can be killed with it.
                process_group=0,
            )
            children[worker] = "Celery worker"
            workers.append(worker)

        def stop(*_args) -> None:
            # A second Ctrl-C while stopping must not leave children behind.
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_IGN)
            children_stop([*children, seed], workers=workers)

        def stop_and_exit(*_args) -> None:
            stop()
            self.exit_now()

        signal.signal(signal.SIGTERM, stop_and_exit)
        # Closing the terminal hangs up only its foreground group: the worker, in its own
        # group, is stopped from here.
        signal.signal(signal.SIGHUP, stop_and_exit)
        try:
            # The address is printed only once the server answers, so it works when clicked.
            served = wait_until_serving(
                f"http://{_link_host(host)}:{port}/health/",
                timeout=600,
                alive=lambda: all(child.poll() is None for child in children),
                tick=watcher.poll,
            )
            # The worker starts once the first page answers (or the wait ends): neither the
            # page nor the seed needs it, and a third process starting at once on two cores
            # holds the first page back by seconds.
            if web.poll() is None:
                start_worker()
            if served:
                self.announce(host, port, watcher)
            elif all(child.poll() is None for child in children):
                self.stderr.write(f"The web server has not answered on port {port} in 10 min.")
            while all(child.poll() is None for child in children):
                watcher.poll()
                time.sleep(0.5)
            exited = [name for child, name in children.items() if child.poll() is not None]
            self.stderr.write(f"Stopping: the {' and '.join(exited)} exited.")
        except KeyboardInterrupt:
            pass
        finally:
            stop()
        self.exit_now()

    def exit_now(self) -> None:
        """Exit once the children are stopped, skipping the interpreter's teardown: freeing
        every module this process loaded (Django, NumPy, SciPy, each app) took 2–3 s on a
        loaded machine after everything had already stopped. Nothing is left to clean up:
        the children are gone and the database connection closes with the process."""
        for stream in (self.stdout, self.stderr, sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)

    def announce(self, host: str, port: int, watcher: SeedWatcher) -> None:
        lines = [
            self.style.SUCCESS(f"\nImpactBench demo: http://{host}:{port}/"),
            f"Sign in with any of these (password {DEMO_PASSWORD!r}):",
            *(
                f"  {account.email:<36} {', '.join(role.value for role in account.roles)}"
                for account in DEMO_ACCOUNTS
            ),
            "Model output in the demo comes from the offline demo model, a stand-in.",
            "Press Ctrl-C to stop.\n",
        ]
        watcher.write("\n".join(lines))
