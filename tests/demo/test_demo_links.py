"""`make demo PORT=…` makes every emailed link point at the demo's own port."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from demo.management.commands.demo import demo_environment

pytestmark = pytest.mark.embedded


def test_the_demo_port_becomes_the_site_url_unless_one_is_set():
    environ = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    assert demo_environment(host="127.0.0.1", port=8123, environ=environ)["SITE_URL"] == (
        "http://127.0.0.1:8123"
    )
    assert demo_environment(host="0.0.0.0", port=9000, environ=environ)["SITE_URL"] == (  # noqa: S104
        "http://127.0.0.1:9000"
    )
    kept = demo_environment(host="127.0.0.1", port=8123, environ={"SITE_URL": "https://ib.org"})
    assert kept["SITE_URL"] == "https://ib.org"


@pytest.mark.slow(reason="starts Django in a subprocess")
def test_a_process_started_with_the_demo_environment_links_to_that_port():
    environ = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    environ["DJANGO_SETTINGS_MODULE"] = "impactbench_site.settings.local"
    child = demo_environment(host="127.0.0.1", port=8765, environ=environ)
    code = "import django; django.setup(); from core.links import site_url; print(site_url('/x/'))"
    out = subprocess.run(  # noqa: S603 - fixed argument list
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env=child,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip().splitlines()[-1] == "http://127.0.0.1:8765/x/"


def test_the_demo_shows_visitors_pages_unless_debug_is_asked_for():
    environ = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    assert demo_environment(host="127.0.0.1", port=8000, environ=environ)["DJANGO_DEBUG"] == "false"
    asked = demo_environment(host="127.0.0.1", port=8000, environ={"DJANGO_DEBUG": "true"})
    assert asked["DJANGO_DEBUG"] == "true"
