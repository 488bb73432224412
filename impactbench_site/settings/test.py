"""Test settings: fast hashing, in-memory email, the same database and broker variables as base."""

import os

from .base import *  # noqa: F403
from .base import CELERY_BROKER_URL, DATABASES, VAR_DIR, filesystem_broker_options

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Worker subprocesses started by tests must see the test database, so SQLite tests use a file
# rather than the in-memory default.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file per test process, so two test runs on one machine do not collide.
    DATABASES["default"]["TEST"] = {
        "NAME": str(VAR_DIR / f"test-impactbench-{os.getpid()}.sqlite3")
    }
DEMO_SEED_EVALUATIONS = False
# Never a running demo's file: tests that show the banner point this at their own tmp_path.
DEMO_SEED_PROGRESS_FILE = VAR_DIR / f"test-demo-seed-{os.getpid()}.json"
LLM_BACKOFF_BASE_SECONDS = 0.01
LLM_BACKOFF_MAX_SECONDS = 0.05
LLM_TIMEOUT_SECONDS = 5.0
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Kept apart from the demo's queue so a test worker never runs demo tasks, and vice versa.
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(VAR_DIR / "test-broker")
# Tests never collect static files; WhiteNoise would only warn about the missing folder.
MIDDLEWARE = [m for m in MIDDLEWARE if m != "whitenoise.middleware.WhiteNoiseMiddleware"]  # noqa: F405
# Each test process keeps its own cache (cleared before every test). The "database" alias is
# the embedded default's shared cache: its table is created by migration, and the lockout tests
# switch to it to show the counters live in the database.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "database": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "django_cache",
    },
}
