"""The pipeline benchmark's scratch PostgreSQL database, broker queues and Celery workers.

A scratch database next to the base one (created, migrated by the benchmark, dropped), the
connection budget the workers' threads may use, and worker processes started with the test
settings on that database, whose CPU time and memory the benchmark reads.
"""

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_MODULE = "impactbench_site.settings.bench"


def _admin(base: str):
    import psycopg

    parts = urlsplit(base)
    return psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True)


def database_create(base: str) -> str:
    parts = urlsplit(base)
    name = f"{parts.path.lstrip('/')}_pipeline"
    with _admin(base) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def journals_clear() -> None:
    """Call journals a killed earlier run left for the scratch database (same name, same
    folder): replayed into the new database they would add attempts this run never made."""
    import shutil

    from evaluations.engine.journal import journal_dir

    shutil.rmtree(journal_dir(), ignore_errors=True)


def database_drop(base: str, scratch: str) -> None:
    with _admin(base) as admin:
        admin.execute(
            f'DROP DATABASE IF EXISTS "{urlsplit(scratch).path.lstrip("/")}" WITH (FORCE)'
        )


def db_connection_budget(base: str) -> int:
    with _admin(base) as admin:
        limit = int(admin.execute("SHOW max_connections").fetchone()[0])
        used = admin.execute("SELECT count(*) FROM pg_stat_activity").fetchone()[0]
    return max(1, limit - used - 20)


def queues_purge(queues: list[str]) -> None:
    """Tasks left by an interrupted run would point at a database that no longer exists."""
    from impactbench_site.celery import app

    with app.connection_for_write() as connection:
        for queue in queues:
            connection.default_channel.queue_purge(queue)


# --- worker processes ------------------------------------------------------------------------


@dataclass
class Workers:
    processes: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def tree(self):
        import psutil

        found = []
        for process in self.processes:
            try:
                parent = psutil.Process(process.pid)
                found += [parent, *parent.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
        return found

    def cpu_seconds(self) -> float:
        import psutil

        total = 0.0
        for process in self.tree():
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def rss(self) -> int:
        import psutil

        total = 0
        for process in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):
                total += process.memory_info().rss
        return total

    def largest_rss(self) -> int:
        """The resident memory of the largest single process (the per-process bound)."""
        import psutil

        largest = 0
        for process in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):
                largest = max(largest, process.memory_info().rss)
        return largest

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait(timeout=10)
        for log in self.logs:
            log.unlink(missing_ok=True)


def workers_start(args, count: int, concurrency: int, scratch: str) -> Workers:
    from django.conf import settings

    workers = Workers()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE, "DATABASE_URL": scratch}
    for n in range(count):
        log = Path(settings.VAR_DIR) / f"bench-worker-{os.getpid()}-{n}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            workers.processes.append(
                subprocess.Popen(  # noqa: S603 - fixed argument list
                    [
                        *(sys.executable, "-m", "celery", "-A", "impactbench_site", "worker"),
                        *("-Q", args.queues, "--pool", args.pool),
                        *("--concurrency", str(concurrency), "--loglevel", "WARNING"),
                        *("--without-gossip", "--without-mingle", "--without-heartbeat"),
                        *("--hostname", f"bench{n}-{os.getpid()}@%h"),
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        workers.logs.append(log)
    _wait_ready(workers)
    return workers


def _wait_ready(workers: Workers) -> None:
    """The broker connection is up once the worker answers a ping."""
    from impactbench_site.celery import app

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for process, log in zip(workers.processes, workers.logs, strict=True):
            if process.poll() is not None:
                raise RuntimeError(f"A worker exited at start:\n{log.read_text()[-2000:]}")
        replies = app.control.ping(timeout=1.0) or []
        mine = [r for r in replies for name in r if f"-{os.getpid()}@" in name]
        if len(mine) >= len(workers.processes):
            return
    raise RuntimeError("The workers did not answer within 180 s.")
