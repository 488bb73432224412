"""A database that accepts connections but never answers: health answers, pages fail fast.

The web server (gunicorn, the project's configuration) reaches PostgreSQL through a proxy in
the test; once frozen, the proxy accepts connections and takes queries but answers nothing,
including on the connections the server already holds.
"""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import ROOT, database_url_of_current_connection
from tests.ports import free_port
from tests.tcp_proxy import FreezableProxy

pytestmark = [
    pytest.mark.faults,
    pytest.mark.skipif(
        "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="puts a proxy in front of PostgreSQL",
    ),
    pytest.mark.slow(reason="waits out timeouts of a database that hangs"),
]

HEALTH_DEADLINE = 1.5  # the checks' own 0.8 s plus the request's overhead on a busy machine
STATEMENT_TIMEOUT = 2
CLIENT_MARGIN = 1
CONNECT_TIMEOUT = 2  # psycopg's least


def _get(url: str, timeout: float = 90) -> tuple[int, str, float]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read().decode()
    return status, body, time.monotonic() - started


def test_health_answers_and_pages_fail_fast_while_the_database_hangs(transactional_db, tmp_path):
    db = connection.settings_dict
    proxy = FreezableProxy((db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))).start()
    direct = database_url_of_current_connection()
    via_proxy = direct.replace(f":{db.get('PORT') or 5432}/", f":{proxy.port}/")
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test",
        "DATABASE_URL": via_proxy,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
        "DATABASE_STATEMENT_TIMEOUT_SECONDS": str(STATEMENT_TIMEOUT),
        "DATABASE_CLIENT_MARGIN_SECONDS": str(CLIENT_MARGIN),
        "DATABASE_CONNECT_TIMEOUT_SECONDS": str(CONNECT_TIMEOUT),
        "IMPACTBENCH_VAR_DIR": str(tmp_path),
    }
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "web.log").open("wb")
    web = subprocess.Popen(  # noqa: S603 - fixed argument list
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--config",
            "impactbench_site/gunicorn.conf.py",
            "impactbench_site.wsgi",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if _get(f"{base}/health/", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.3)
        assert _get(f"{base}/metrics/")[0] == 200  # the worker now holds a connection

        proxy.freeze()
        for path in ("/health/", "/health/ready/"):
            status, body, took = _get(f"{base}{path}")
            print(f"{path} with the database hanging: {status} in {took:.2f} s")
            assert status == 503
            answer = json.loads(body)
            assert "database" in answer["failing"]
            assert took < HEALTH_DEADLINE
        status, body, took = _get(f"{base}/metrics/")
        print(f"/metrics/ with the database hanging: {status} in {took:.2f} s")
        assert status == 500
        # The held connection is cut off after the statement timeout plus the margin, then a
        # new one gives up after the connect timeout: seconds, not gunicorn's 60.
        assert took < STATEMENT_TIMEOUT + CLIENT_MARGIN + CONNECT_TIMEOUT + 1.5
        status, _body, took = _get(f"{base}/health/")
        assert status == 503
        assert took < HEALTH_DEADLINE

        proxy.thaw()
        thawed = time.monotonic()
        while _get(f"{base}/health/")[0] != 200:
            assert time.monotonic() - thawed < 15, "health did not recover"
            time.sleep(0.2)
        print(f"/health/ answered 200 again {time.monotonic() - thawed:.2f} s after the thaw")
        assert _get(f"{base}/metrics/")[0] == 200
    finally:
        os.killpg(web.pid, 9)
        web.wait(timeout=10)
        log.close()
        proxy.close()
        # The proxy's upstream sessions close with their clients, a moment later.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
