"""How far the demo seed has got, shared between the seeding process and the web server.

The seed runs in its own process beside the web server (`manage.py demo`), so its progress lives
in a small JSON file in the var folder rather than in the database: reading it costs every page
one failed `open()` once seeding is over (no query), and a seed that crashed cannot leave a
database row claiming it is still running — a file whose process is gone reads "interrupted".
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext

from core.processes import process_alive

RUNNING, COMPLETE, FAILED, INTERRUPTED = "running", "complete", "failed", "interrupted"
# At most this often the seed rewrites the file while a step counts (steps always write).
WRITE_INTERVAL_SECONDS = 0.3


def progress_path() -> Path:
    return Path(settings.DEMO_SEED_PROGRESS_FILE)


@dataclass
class SeedProgress:
    state: str = RUNNING
    step: str = ""  # key of the current step, e.g. "run"
    label: str = "starting"  # shown to people: "run", "scenarios"
    unit: str = ""  # what `done` and `total` count, e.g. "conversations"
    done: int = 0
    total: int = 0
    step_index: int = 0  # 1-based
    steps: int = 0
    # Shares of the whole seed's usual time: finished steps, and the current one (the bar).
    share_before: float = 0.0
    share: float = 0.0
    pid: int = 0
    started_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    error: str = ""
    reports: list[str] = field(default_factory=list)  # one line per finished step

    @property
    def percent(self) -> float:
        if self.state == COMPLETE:
            return 100.0
        within = min(self.done / self.total, 1.0) if self.total else 0.0
        return round(100 * min(self.share_before + self.share * within, 1.0), 1)

    @property
    def message(self) -> str:
        """One line for the banner and the terminal, e.g. "run 412 / 1,152 conversations"."""
        if self.state == COMPLETE:
            return gettext("Demo data is ready.")
        if self.state == FAILED:
            return gettext(
                "Seeding demo data stopped: %(error)s. Run `make demo` again to resume."
            ) % {"error": self.error}
        if self.state == INTERRUPTED:
            return gettext(
                "Seeding demo data was interrupted; run `make demo` again to resume where it "
                "stopped."
            )
        # The step's label and unit are the seed's own words (data, as the steps declare them).
        detail = self.label
        if self.total:
            detail += f" {self.done:,} / {self.total:,}{f' {self.unit}' if self.unit else ''}"
        if self.steps:
            return gettext("Seeding demo data: %(detail)s (step %(step)s of %(steps)s)") % {
                "detail": detail,
                "step": self.step_index,
                "steps": self.steps,
            }
        return gettext("Seeding demo data: %(detail)s") % {"detail": detail}

    def as_json(self) -> dict:
        data = asdict(self)
        data.pop("reports")
        data.update(seeding=self.state == RUNNING, percent=self.percent, message=self.message)
        return data


def progress_write(progress: SeedProgress) -> None:
    """Replace the file in one step, so a reader never sees half of it."""
    path = progress_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    progress.updated_at = time.time()
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(asdict(progress)), encoding="utf-8")
    os.replace(partial, path)


def progress_read() -> SeedProgress | None:
    """The seed's progress, or None when no seed ever ran here (or its file is unreadable).

    A "running" file whose process is gone (killed, machine restarted) reads as interrupted.
    """
    try:
        data = json.loads(progress_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    known = SeedProgress.__dataclass_fields__
    try:
        progress = SeedProgress(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        return None
    if progress.state == RUNNING and not process_alive(progress.pid):
        progress.state = INTERRUPTED
    return progress


def seed_banner() -> SeedProgress | None:
    """What the page banner shows: the progress while seeding is not complete, else None."""
    progress = progress_read()
    if progress is None or progress.state == COMPLETE:
        return None
    return progress


class SeedTracker:
    """Records the seed's progress in the file (throttled) for the web server and the terminal.

    `count` is the `core.progress.Progress` the slow steps call; `on_count(done, total)` also
    receives it (the command's terminal progress bar).
    """

    def __init__(self, *, steps: int, record: bool, on_count=None) -> None:
        self.progress = SeedProgress(steps=steps, pid=os.getpid())
        self.record = record
        self.on_count = on_count
        self._written = 0.0

    def _write(self, *, force: bool = False) -> None:
        if not self.record:
            return
        now = time.monotonic()
        if force or now - self._written >= WRITE_INTERVAL_SECONDS:
            progress_write(self.progress)
            self._written = now

    def step(
        self,
        index: int,
        *,
        key: str,
        label: str,
        unit: str = "",
        share_before: float = 0.0,
        share: float = 0.0,
    ) -> None:
        self.progress.step_index, self.progress.step = index, key
        self.progress.label, self.progress.unit = label, unit
        self.progress.share_before, self.progress.share = share_before, share
        self.progress.done = self.progress.total = 0
        self._write(force=True)

    def count(self, done: int, total: int, stage: str = "") -> None:
        self.progress.done, self.progress.total = done, total
        if self.on_count is not None:
            self.on_count(done, total)
        self._write()

    def report(self, line: str) -> None:
        self.progress.reports.append(line)
        self._write(force=True)

    def finish(self) -> None:
        self.progress.state = COMPLETE
        self._write(force=True)

    def fail(self, error: str) -> None:
        self.progress.state, self.progress.error = FAILED, error
        self._write(force=True)


def progress_mark_failed(error: str) -> None:
    """Record that the seed stopped (its process exited without finishing)."""
    progress = progress_read() or SeedProgress()
    if progress.state == COMPLETE:
        return
    progress.state, progress.error = FAILED, error
    with contextlib.suppress(OSError):
        progress_write(progress)
