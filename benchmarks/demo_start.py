"""Time `make demo` from its command to the first page and to the complete seed.

Runs the command the Makefile's `demo` target runs (read from the Makefile, with this
interpreter as the virtualenv's python and a free port) in a scratch var folder on the embedded
defaults (SQLite, filesystem broker), as a newcomer's first start: migrations, demo accounts,
then the web server, the Celery worker and the background seed together. Measures, from the
moment the command starts, until GET / first answers 200 and until the seed's progress file
says complete, then how long Ctrl-C takes to stop the command and every process it started.
Targets (issue 27): the first page within 10 s and the full seed within 30 s, from a warm
virtualenv on an idle 2-core machine; stopping within 5 s.

On a shared machine the wall times are inflated by other processes, so the script also prints
the load average before and after, the same fixed CPU loop as `demo_seed.py` (the faster of one
timing before and one after; time ÷ baseline moves with the code more than with the load) and
the CPU seconds all the demo's processes had used by each moment (Linux's /proc), which other
processes barely change. PASS or MISS is judged on the measured seconds; nothing is scaled.

Run from the repository root: ``.venv/bin/python benchmarks/demo_start.py [--timeout 300]``.
"""

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Import from the repository root, not this folder: a script named like a package would
# shadow it for every library that probes for it (numba looks for `coverage`).
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.demo_seed import cpu_loop  # noqa: E402

FIRST_PAGE_TARGET = 10.0
SEED_TARGET = 30.0
STOP_TARGET = 5.0


def demo_command(port: int) -> list[str]:
    """The `demo` target's recipe from the Makefile, with this python and `port`."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^demo:[^\n]*\n\t([^\n]+)", makefile, flags=re.MULTILINE)
    if match is None:
        raise SystemExit("No `demo` target with a recipe line in the Makefile.")
    recipe = match.group(1).replace("$(BIN)/python", sys.executable)
    recipe = recipe.replace("$(PORT)", str(port))
    if "$(" in recipe:
        raise SystemExit(f"The demo recipe uses a variable this script does not know: {recipe}")
    return shlex.split(recipe)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - local http
            return response.status == 200
    except (OSError, ValueError):
        return False


def seed_state(progress_file: Path) -> str:
    try:
        return json.loads(progress_file.read_text(encoding="utf-8")).get("state", "")
    except (OSError, ValueError):  # not written yet, or caught mid-rewrite
        return ""


def session_pids(session: int) -> list[int]:
    """The live processes of a session (Linux's /proc; none elsewhere)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # gone meanwhile
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def stop(process: subprocess.Popen) -> float | None:
    """Ctrl-C as a terminal sends it (SIGINT to the foreground process group); the seconds
    until `manage.py demo` and every process of its session (started for this run alone) are
    gone, or None when they are not within 30 s (then they are killed)."""
    start = time.perf_counter()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    while time.perf_counter() - start < 30:
        if process.poll() is not None and not session_pids(process.pid):
            return time.perf_counter() - start
        time.sleep(0.02)
    for pid in session_pids(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()
    return None


def session_cpu_seconds(session: int) -> float:
    """CPU seconds (user + system) the processes of a session have used so far, those exited
    included (a parent's stat counts the children it reaped). Linux only; 0 elsewhere."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # gone meanwhile
            continue
        # After the name: state ppid pgrp session … utime(12) stime cutime cstime.
        if int(fields[3]) == session:
            total += sum(int(value) for value in fields[11:15])
    return total / tick


def verdict(seconds: float | None, target: float) -> str:
    return "MISS" if seconds is None or seconds > target else "PASS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=300, help="give up after this many s")
    parser.add_argument("--keep", action="store_true", help="keep the scratch var folder")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="impactbench-demo-start-"))
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE")
    }
    environment["IMPACTBENCH_VAR_DIR"] = str(var_dir)
    port = free_port()
    command = demo_command(port)
    progress_file = var_dir / "demo-seed.json"
    log = var_dir / "demo-start.log"

    load_before = os.getloadavg()
    baseline = cpu_loop()
    print(f"command: {shlex.join(command)}")
    print(f"scratch var folder {var_dir}")
    first_page = seed_done = None
    first_page_cpu = seed_cpu = 0.0
    state = ""
    with log.open("w", encoding="utf-8") as output:
        start = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603 - the Makefile's own recipe
            command,
            cwd=ROOT,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # Ctrl-C's default action, as a terminal's foreground job has, even when this
            # script runs in the background (which starts its children with SIGINT ignored).
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            while time.perf_counter() - start < args.timeout and process.poll() is None:
                if first_page is None and answers(f"http://127.0.0.1:{port}/"):
                    first_page = time.perf_counter() - start
                    first_page_cpu = session_cpu_seconds(process.pid)
                    print(f"  first page 200 after {first_page:6.2f} s", flush=True)
                state = seed_state(progress_file)
                if state in ("complete", "failed"):
                    seed_done = time.perf_counter() - start
                    seed_cpu = session_cpu_seconds(process.pid)
                    print(f"  seed {state} after {seed_done:6.2f} s", flush=True)
                    break
                time.sleep(0.1)
        finally:
            stopped = stop(process)
    load_after = os.getloadavg()
    baseline = min(baseline, cpu_loop())

    if state != "complete":
        print(f"the seed did not complete (state {state or 'unknown'}); log: {log}")
        seed_done = None
    print(f"\nload average (1, 5, 15 min) before: {' '.join(f'{x:.2f}' for x in load_before)}")
    print(f"load average (1, 5, 15 min) after:  {' '.join(f'{x:.2f}' for x in load_after)}")
    print(f"cores: {os.cpu_count()}; baseline (fixed CPU loop, best of 2): {baseline:.3f} s")
    # CPU seconds of all the demo's processes by then: what the wait would cost if nothing
    # else ran (on two cores, at least half of it passes as wall time).
    print(
        f"{'measure':<22} {'seconds':>8} {'÷ baseline':>11} {'target':>7} {'':>5} "
        f"{'CPU s (all processes)':>22}"
    )
    for name, seconds, target, cpu in (
        ("first page (GET /)", first_page, FIRST_PAGE_TARGET, first_page_cpu),
        ("complete seed", seed_done, SEED_TARGET, seed_cpu),
    ):
        shown = f"{seconds:8.2f} {seconds / baseline:11.1f}" if seconds is not None else " " * 20
        print(f"{name:<22} {shown} {target:6.0f}s {verdict(seconds, target):>5} {cpu:22.1f}")
    # Stopped once the seed is done, as a newcomer would after a look around.
    shown = f"{stopped:8.2f} {stopped / baseline:11.1f}" if stopped is not None else " " * 20
    stop_verdict = verdict(stopped, STOP_TARGET)
    print(f"{'stop after Ctrl-C':<22} {shown} {STOP_TARGET:6.0f}s {stop_verdict:>5}")
    if args.keep:
        print(f"kept {var_dir}")
    else:
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
