"""`manage.py demo` announces its address only once the server answers, and serves pages while
the demo data seeds in the background."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from demo.management.commands.demo import server_answers, wait_until_serving
from tests.conftest import ROOT

pytestmark = pytest.mark.embedded


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
    port = _free_port()
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

    port = _free_port()
    listening, servers = _serve_later(port, delay=0, handler=Failing)
    listening.wait(5)
    try:
        assert not wait_until_serving(f"http://127.0.0.1:{port}/health/", timeout=0.6)
    finally:
        servers[0].shutdown()


def test_the_wait_gives_up_when_the_server_process_exits():
    port = _free_port()
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
    port = _free_port()
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
