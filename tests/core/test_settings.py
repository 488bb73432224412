"""Settings are read from the environment; each case imports them in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded

ROOT = Path(__file__).resolve().parents[2]

PROBE = (
    "import json, django; from django.conf import settings; django.setup();"
    "db = settings.DATABASES['default'];"
    "print(json.dumps({'engine': db['ENGINE'], 'name': str(db['NAME']), 'host': db.get('HOST', ''),"
    " 'port': str(db.get('PORT', '')), 'broker': settings.CELERY_BROKER_URL,"
    " 'debug': settings.DEBUG,"
    " 'email': settings.EMAIL_BACKEND, 'hosts': settings.ALLOWED_HOSTS}))"
)

CLEARED = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "DJANGO_DEBUG",
    "EMAIL_URL",
    "DJANGO_SECRET_KEY",
    "DJANGO_ALLOWED_HOSTS",
    "DJANGO_SETTINGS_MODULE",
)


def read_settings(module: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in CLEARED}
    base.update({"DJANGO_SETTINGS_MODULE": module, "IMPACTBENCH_VAR_DIR": str(tmp_path), **env})
    return subprocess.run(  # noqa: S603 - fixed argument list
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def parsed(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow(reason="loads the settings in a fresh interpreter")
def test_embedded_defaults_need_no_server(tmp_path):
    values = parsed(read_settings("impactbench_site.settings.local", tmp_path))
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["name"] == str(tmp_path / "impactbench.sqlite3")
    assert values["broker"] == "filesystem://"
    assert values["debug"] is True
    assert values["email"] == "django.core.mail.backends.console.EmailBackend"
    assert (tmp_path / "broker" / "queue").is_dir()


@pytest.mark.slow(reason="loads the settings in a fresh interpreter")
def test_database_and_broker_urls_switch_to_postgres_and_redis(tmp_path):
    values = parsed(
        read_settings(
            "impactbench_site.settings.local",
            tmp_path,
            DATABASE_URL="postgres://ib:secret@db.internal:6543/impact",
            CELERY_BROKER_URL="redis://cache.internal:6379/2",
            DJANGO_DEBUG="false",
            DJANGO_ALLOWED_HOSTS="impactbench.org,www.impactbench.org",
        )
    )
    assert values["engine"] == "django.db.backends.postgresql"
    assert (values["name"], values["host"], values["port"]) == ("impact", "db.internal", "6543")
    assert values["broker"] == "redis://cache.internal:6379/2"
    assert values["debug"] is False
    assert values["hosts"] == ["impactbench.org", "www.impactbench.org"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "short"}, "at least 32 characters"),
        ({"DJANGO_SECRET_KEY": "x" * 40, "DJANGO_ALLOWED_HOSTS": "a.org"}, "DATABASE_URL"),
        (
            {
                "DJANGO_SECRET_KEY": "x" * 40,
                "DATABASE_URL": "postgres://u@h/db",
                "DJANGO_ALLOWED_HOSTS": "a.org",
            },
            "CELERY_BROKER_URL",
        ),
    ],
)
def test_production_refuses_to_start_without_its_secrets(tmp_path, env, message):
    result = read_settings("impactbench_site.settings.production", tmp_path, **env)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.slow(reason="loads the settings in a fresh interpreter")
def test_production_starts_when_configured(tmp_path):
    values = parsed(
        read_settings(
            "impactbench_site.settings.production",
            tmp_path,
            DJANGO_SECRET_KEY="k" * 50,
            DATABASE_URL="postgres://u@h:5432/db",
            CELERY_BROKER_URL="redis://h:6379/0",
            DJANGO_ALLOWED_HOSTS="impactbench.org",
            EMAIL_URL="smtp+tls://user:pw@smtp.example.org:587",
        )
    )
    assert values["debug"] is False
    assert values["email"] == "django.core.mail.backends.smtp.EmailBackend"
