"""`manage.py demo` announces its address only once the server answers, and serves pages while
the demo data seeds in the background."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from demo.management.commands.demo import children_stop, server_answers, wait_until_serving
from tests.conftest import ROOT
from tests.ports import free_port

pytestmark = pytest.mark.embedded


class _Health(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802 - the http.server API
        self.send_response(self.status if self.path == "/health/" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def _serve_later(port: int, delay: float, handler=_Health) -> tuple[threading.Event, list]:
    """Start an HTTP server on the port after `delay` seconds; the event is set once it listens."""
    listening, servers = threading.Event(), []

    def run():
        time.sleep(delay)
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        servers.append(server)
        listening.set()
        server.serve_forever(poll_interval=0.05)

    threading.Thread(target=run, daemon=True).start()
    return listening, servers


def test_the_wait_returns_only_once_the_server_answers():
    port = free_port()
    url = f"http://127.0.0.1:{port}/health/"
    assert not server_answers(url)  # nothing listens yet
    listening, servers = _serve_later(port, delay=0.8)
    polls = []
    try:
        assert wait_until_serving(url, timeout=20, tick=lambda: polls.append(listening.is_set()))
        assert listening.is_set()
        assert polls  # it did wait, polling in between, while nothing listened
        assert polls[0] is False
        assert server_answers(url)
    finally:
        for server in servers:
            server.shutdown()


def test_a_server_that_answers_with_an_error_is_not_serving():
    class Failing(_Health):
        status = 500

    port = free_port()
    listening, servers = _serve_later(port, delay=0, handler=Failing)
    listening.wait(5)
    try:
        assert not wait_until_serving(f"http://127.0.0.1:{port}/health/", timeout=0.6)
    finally:
        servers[0].shutdown()


def test_the_wait_gives_up_when_the_server_process_exits():
    port = free_port()
    checks, ticks = [], []

    def alive() -> bool:
        checks.append(1)
        return len(checks) < 3  # the server process exits after two polls

    url = f"http://127.0.0.1:{port}/health/"
    assert not wait_until_serving(url, timeout=600, alive=alive, tick=lambda: ticks.append(1))
    assert (len(checks), len(ticks)) == (3, 2)  # stopped at once, not after the timeout


def _demo_environment(var_dir) -> dict:
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "SITE_URL")
    }
    return environ | {
        "IMPACTBENCH_VAR_DIR": str(var_dir),
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.local",
        # The background seed without the evaluation run: the same steps, a minute shorter.
        "DEMO_SEED_EVALUATIONS": "false",
        "PYTHONUNBUFFERED": "1",
    }


@pytest.mark.slow(reason="runs the demo command until its seed completes")
@pytest.mark.timeout(300)
def test_demo_prints_its_address_once_it_answers_and_seeds_behind_it(tmp_path):
    """On the embedded defaults in a scratch var folder, whatever database the suite uses."""
    port = free_port()
    demo = subprocess.Popen(  # noqa: S603 - fixed argument list
        [sys.executable, "manage.py", "demo", "--port", str(port), "--concurrency", "1"],
        cwd=ROOT,
        env=_demo_environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    output = []
    try:
        deadline = time.monotonic() + 240
        for line in demo.stdout:
            output.append(line)
            if f"ImpactBench demo: {base}/" in line:
                # Printed only once the server answers: the very next request succeeds.
                with urllib.request.urlopen(f"{base}/", timeout=10) as response:  # noqa: S310
                    assert response.status == 200
                break
            assert time.monotonic() < deadline, "".join(output)
        else:
            pytest.fail("the demo exited before printing its address:\n" + "".join(output))
        progress_url = f"{base}/demo/progress/"
        while True:
            with urllib.request.urlopen(progress_url, timeout=10) as response:  # noqa: S310
                state = json.load(response)["state"]
            if state != "running":
                break
            assert time.monotonic() < deadline, "".join(output)
            time.sleep(0.5)
        assert state == "complete", "".join(output)
        with urllib.request.urlopen(f"{base}/", timeout=10) as response:  # noqa: S310
            assert "demo-seed-banner" not in response.read().decode()
        assert (tmp_path / "demo-seed.log").read_text().strip().endswith("Demo data is ready.")
    finally:
        os.killpg(demo.pid, 15)
        demo.wait(timeout=60)


def _session_processes(session: int) -> dict[int, str]:
    """The live processes of a session (Linux's /proc), by pid, with their command lines."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):  # gone meanwhile
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            found[int(stat.parent.name)] = command
    return found


def _as_terminal_job() -> None:
    """In the child before exec: Ctrl-C's default action, as a terminal's foreground job has.
    A suite started in the background (CI's runner, `cmd &` in a script) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler: the demo would never see
    the Ctrl-C this test sends, whatever it does with it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_background_start_is_given_ctrl_c_back():
    """The same launch as the Ctrl-C test, from a process that ignores SIGINT (as a suite run in
    the background does): the child gets a KeyboardInterrupt handler all the same."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    for preexec, expected in ((None, "False"), (_as_terminal_job, "True")):
        child = subprocess.run(  # noqa: S603 - fixed code
            [sys.executable, "-c", probe],
            preexec_fn=lambda preexec=preexec: (
                signal.signal(signal.SIGINT, signal.SIG_IGN),
                preexec and preexec(),
            ),
            capture_output=True,
            text=True,
            check=True,
            start_new_session=True,
        )
        assert child.stdout.strip() == expected, (preexec, child.stdout, child.stderr)


@pytest.mark.slow(reason="starts the demo command, waits for its worker, then stops it")
@pytest.mark.timeout(300)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_ctrl_c_stops_the_demo_and_every_process_it_started(tmp_path):
    """Ctrl-C as a terminal sends it (SIGINT to the foreground process group) once the web
    server, the seed and the Celery worker with its pool all run: the command exits and leaves
    no process of its session behind. Its speed is measured by benchmarks/demo_start.py."""
    port = free_port()
    demo = subprocess.Popen(  # noqa: S603 - fixed argument list
        [sys.executable, "manage.py", "demo", "--port", str(port), "--concurrency", "2"],
        cwd=ROOT,
        env=_demo_environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_as_terminal_job,
    )
    output, ready = [], threading.Event()

    def read() -> None:
        # Read to the end, so the worker's log never fills the pipe and blocks it.
        for line in demo.stdout:
            output.append(line)
            if "Press Ctrl-C to stop." in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while not ready.wait(0.5):
            assert demo.poll() is None, "the demo exited before it was ready:\n" + "".join(output)
        deadline = time.monotonic() + 120
        # The worker and its two pool processes (the worker is started once the server answers).
        while sum("celery" in c for c in _session_processes(demo.pid).values()) < 3:
            assert time.monotonic() < deadline, _session_processes(demo.pid)
            time.sleep(0.2)
        os.killpg(demo.pid, signal.SIGINT)
        try:
            code = demo.wait(timeout=60)
        except subprocess.TimeoutExpired:
            left = _session_processes(demo.pid)
            pytest.fail(f"still running 60 s after Ctrl-C: {left}\n" + "".join(output))
        assert code == 0, "".join(output)
        deadline = time.monotonic() + 10
        while _session_processes(demo.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session_processes(demo.pid) == {}
    finally:
        for pid in _session_processes(demo.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if demo.poll() is None:
            demo.kill()


def _python(code: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], **kwargs)  # noqa: S603 - fixed code


# A child that ignores SIGTERM (a task it will not give up) and reports what it receives.
_STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *a: print("TERM", flush=True))
signal.signal(signal.SIGQUIT, lambda *a: (print("QUIT", flush=True), sys.exit(0)))
print("ready", flush=True)
time.sleep(60)
"""
# A worker whose pool process outlives it unless its whole process group is killed.
_WORKER_WITH_POOL = """
import signal, subprocess, sys, time
pool = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print(pool.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
@pytest.mark.slow(reason="waits out a stubborn pool process's two-second cold stop before it kills")
def test_stopping_asks_a_worker_cold_then_kills_what_is_left_with_its_group():
    stubborn_worker = _python(_STUBBORN, stdout=subprocess.PIPE, text=True, process_group=0)
    stubborn_child = _python(_STUBBORN, stdout=subprocess.PIPE, text=True)
    with_pool = _python(_WORKER_WITH_POOL, stdout=subprocess.PIPE, text=True, process_group=0)
    pool_pid = int(with_pool.stdout.readline())
    for child in (stubborn_worker, stubborn_child):
        assert child.stdout.readline().strip() == "ready"
    try:
        children_stop(
            [stubborn_worker, stubborn_child, with_pool],
            workers=[stubborn_worker, with_pool],
            grace=0.3,
            cold_wait=2.0,
        )
        # The worker that held on through SIGTERM was asked to stop cold, and did.
        assert stubborn_worker.stdout.read().split() == ["TERM", "QUIT"]
        assert stubborn_worker.returncode == 0
        # The child that held on was killed; so was the pool process its worker left behind.
        assert stubborn_child.returncode == -signal.SIGKILL
        assert with_pool.returncode == 0
        deadline = time.monotonic() + 5  # SIGKILL sent: gone once the kernel has done it
        while _alive(pool_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pool_pid)
    finally:
        for pid in (stubborn_worker.pid, stubborn_child.pid, with_pool.pid, pool_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
