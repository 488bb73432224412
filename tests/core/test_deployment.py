"""The production deployment: compose.yaml against the Compose specification, `check --deploy`,
and the very commands compose runs (gunicorn, both workers, beat) booted without Docker."""

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema
import pytest
import yaml
from django.conf import settings

from tests.conftest import ROOT, database_url_of_current_connection
from tests.ports import free_port

COMPOSE = ROOT / "compose.yaml"
# The Compose specification's schema (compose-spec/compose-spec, schema/compose-spec.json,
# Apache-2.0), vendored: tests have no network.
SCHEMA = ROOT / "tests" / "data" / "compose-spec.json"
SECRET = "test-only-secret-key-that-is-long-enough-0123456789"
APP_SERVICES = ("web", "worker-default", "worker-llm", "beat")


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_file_follows_the_compose_specification():
    document = compose()
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    services = document["services"]
    assert set(services) >= {"postgres", "redis", "migrate", *APP_SERVICES}
    assert services["web"]["command"][0] == "gunicorn"
    queues = [services[name]["command"] for name in ("worker-default", "worker-llm")]
    assert [c[c.index("-Q") + 1] for c in queues] == ["default", "llm"]
    assert "beat" in services["beat"]["command"]
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        assert environment["DJANGO_SETTINGS_MODULE"] == "impactbench_site.settings.production"
        assert environment["CELERY_BROKER_URL"].startswith("redis://")
        assert environment["DATABASE_URL"].startswith("postgres://")


@pytest.mark.slow(reason="runs manage.py check --deploy in a subprocess")
def test_production_settings_pass_the_deploy_checks():
    # The browser tests' in-process switch must not leak into a production check.
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.production",
        "DJANGO_SECRET_KEY": SECRET,
        "DATABASE_URL": "postgres://impactbench@127.0.0.1:5432/impactbench",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "DJANGO_ALLOWED_HOSTS": "impactbench.example.org",
    }
    result = subprocess.run(  # noqa: S603 - fixed argument list
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.slow(reason="starts gunicorn in a subprocess")
def test_the_web_server_refuses_to_start_without_collected_static_files(tmp_path):
    """Production pages need the manifest collectstatic writes: a clear message, not 500s."""
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.production",
        "DJANGO_SECRET_KEY": SECRET,
        "DATABASE_URL": "postgres://impactbench@127.0.0.1:5432/impactbench",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "DJANGO_ALLOWED_HOSTS": "impactbench.example.org",
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    boot = [sys.executable, "-c", "import impactbench_site.wsgi"]
    result = subprocess.run(  # noqa: S603 - fixed argument list
        boot, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "Run `python manage.py collectstatic --noinput`" in result.stderr
    # With them collected it starts: the boot test below collects them first, as the image does.


def _interpolate(argument: str, env: dict) -> str:
    """Compose's ${NAME:-default} substitution, for the commands' arguments."""
    return re.sub(
        r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), argument
    )


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@pytest.mark.slow(reason="boots the web server, a worker and beat as compose does")
@pytest.mark.worker
@pytest.mark.skipif(
    not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="compose runs Redis; the embedded filesystem broker is for the demo",
)
def test_the_commands_compose_runs_boot_and_report_ready(transactional_db, tmp_path):
    from core.models import WorkerPing
    from core.tasks import worker_ping

    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.production",
        "DJANGO_SECRET_KEY": SECRET,
        "DATABASE_URL": database_url_of_current_connection(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "False",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        "LLM_WORKER_CONCURRENCY": "2",
        "HEALTH_HEARTBEAT_SECONDS": "1",
        "IMPACTBENCH_VAR_DIR": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    # As the image does at build time: the web server refuses to start without them.
    env["STATIC_ROOT"] = str(tmp_path / "static")
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"]
    subprocess.run(collect, cwd=ROOT, env=env, check=True, timeout=300)  # noqa: S603
    services = compose()["services"]
    processes = {}
    logs = {}
    try:
        for name in APP_SERVICES:
            command = [_interpolate(str(a), env) for a in services[name]["command"]]
            # The image's working directory is the project root (/app), as here.
            command = [a.replace("/app/var", str(tmp_path)) for a in command]
            logs[name] = (tmp_path / f"{name}.log").open("wb")
            processes[name] = subprocess.Popen(  # noqa: S603 - compose's own commands
                command,
                cwd=ROOT,
                env=env,
                stdout=logs[name],
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 90
        status, body = 0, {}
        while time.monotonic() < deadline:
            exited = [n for n, p in processes.items() if p.poll() is not None]
            assert not exited, f"{exited} exited: " + (tmp_path / f"{exited[0]}.log").read_text()
            try:
                status, body = _get(f"http://127.0.0.1:{port}/health/ready/")
            except (OSError, ValueError):
                status = 0
            if status == 200:
                break
            time.sleep(0.5)
        assert status == 200, body
        assert set(body["checks"]) == {"database", "cache", "broker", "worker"}
        assert _get(f"http://127.0.0.1:{port}/health/")[0] == 200
        # The llm-queue worker answers too (the heartbeat proved the default one).
        worker_ping.apply_async(("llm-check", "2026-01-01T00:00:00+00:00"), queue="llm")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not WorkerPing.objects.filter(token="llm-check"):
            time.sleep(0.3)
        ping = WorkerPing.objects.get(token="llm-check")
        assert ping.worker_hostname
        assert b"llm@" in (tmp_path / "worker-llm.log").read_bytes()
    finally:
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, 15)
        for process in processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
        for log in logs.values():
            log.close()
