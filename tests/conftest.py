"""Shared fixtures: users per role, logged-in clients, and a real Celery worker process."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from core.roles import Role
from tests.factories import UserFactory
from tests.queued import SentTasks

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.budget", "tests.lanes"]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts the test processes
def pytest_sessionstart(session):
    """`--create-db`: the template is dropped once for the run, here, and the first test
    process to need it migrates it anew while the others wait for it."""
    if session.config.getoption("create_db") and not hasattr(session.config, "workerinput"):
        from pytest_django.plugin import blocking_manager_key

        from tests.databases import template_drop

        with session.config.stash[blocking_manager_key].unblock():
            template_drop()


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker):
    """This process's test database, cloned from a template migrated once per schema
    (tests/databases.py)."""
    from tests.databases import clone_setup, clone_teardown

    with django_db_blocker.unblock():
        clone_setup()
    yield
    with django_db_blocker.unblock():
        clone_teardown()


@pytest.fixture(autouse=True)
def _clear_cache():
    """Rate limits and cached pages must not leak from one test to the next (the in-memory
    caches; the database ones live in the test database, rolled back after each test)."""
    from django.core.cache import caches

    caches["default"].clear()
    caches["pages"].clear()


@pytest.fixture(autouse=True)
def _site_language():
    """Each test starts in the site's default language. A request through LocaleMiddleware
    (the test client runs in this thread) or a test that activates a language leaves it active
    for the thread, and the next test's messages would come out in Spanish."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _cache_breakers_forgotten():
    """A test's Redis (often on a port another test used) starts with its breaker closed."""
    from core.caches import cache_breakers_forget

    cache_breakers_forget()


@pytest.fixture(autouse=True)
def _crisis_lines_forgotten():
    """The engine keeps each country's crisis lines per process as it last read them; a line a
    test edited (rolled back after it) or a country read before its lines existed must not
    reach the next test's offline replies and graders."""
    from evaluations.crisis_selectors import crisis_lines_forget

    crisis_lines_forget()


@pytest.fixture
def contributor(db):
    return UserFactory(roles=[Role.CONTRIBUTOR])


@pytest.fixture
def researcher(db):
    return UserFactory(roles=[Role.CONTRIBUTOR, Role.RESEARCHER])


@pytest.fixture
def expert_reviewer(db):
    return UserFactory(roles=[Role.CONTRIBUTOR, Role.EXPERT_REVIEWER])


@pytest.fixture
def maintainer(db):
    return UserFactory(roles=[Role.CONTRIBUTOR, Role.MAINTAINER])


@pytest.fixture
def client_for(client):
    """Return a test client logged in as the given user."""

    def login(user):
        client.force_login(user)
        return client

    return login


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


def database_url_of_current_connection() -> str:
    """DATABASE_URL for the database the tests are using (the test database, once set up)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


class WorkerProcess:
    """A `celery worker` subprocess bound to the test database and the configured broker."""

    def __init__(
        self,
        *,
        queues: str = "default,llm",
        concurrency: int = 2,
        extra_env=None,
        beat: bool = False,
    ):
        self.queues = queues
        self.concurrency = concurrency
        self.extra_env = extra_env or {}
        # With `beat`, the worker also runs Celery beat (-B), so the reaper sweeps runs.
        self.beat = beat
        self.process: subprocess.Popen | None = None
        self.log_path = (
            Path(settings.VAR_DIR) / f"test-worker-{os.getpid()}-{time.monotonic_ns()}.log"
        )

    def start(self) -> "WorkerProcess":
        # What its claims carry in `claimed_by` (before "@host").
        self.name = f"test-{time.monotonic_ns()}"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test",
            "DATABASE_URL": database_url_of_current_connection(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            **self.extra_env,
        }
        # A fresh checkout has no var/ folder until something writes there first.
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_file = self.log_path.open("wb")
        self.process = subprocess.Popen(  # noqa: S603 - fixed argument list
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "impactbench_site",
                "worker",
                "-Q",
                self.queues,
                "--concurrency",
                str(self.concurrency),
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--hostname",
                f"{self.name}@%h",
                *(
                    ["-B", "--schedule", str(self.log_path.with_suffix(".beat"))]
                    if self.beat
                    else []
                ),
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole process group: the worker dies mid-task, as in a crash."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        if getattr(self, "log_file", None):
            self.log_file.close()


@pytest.fixture
def celery_worker_factory(transactional_db):
    """Start real worker processes; each is stopped (or already killed) at teardown."""
    workers: list[WorkerProcess] = []

    def start(**kwargs) -> WorkerProcess:
        worker = WorkerProcess(**kwargs).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
        worker.log_path.unlink(missing_ok=True)
        for leftover in worker.log_path.parent.glob(worker.log_path.stem + ".beat*"):
            leftover.unlink(missing_ok=True)


@pytest.fixture
def celery_worker(celery_worker_factory):
    return celery_worker_factory()


@pytest.fixture(autouse=True)
def _no_real_model_endpoint(settings):
    """A configuration without its own endpoint must never reach a real model from a test."""
    settings.LLM_DEFAULT_BASE_URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def fake_anthropic(monkeypatch):
    """A local Anthropic Messages API (tests/fake_anthropic.py); its key is ANTHROPIC_API_KEY."""
    from tests.fake_anthropic import FakeAnthropicServer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    server = FakeAnthropicServer(api_key="sk-ant-test").start()
    yield server
    server.stop()


@pytest.fixture
def fake_gemini(monkeypatch):
    """A local Gemini API (tests/fake_gemini.py); its key is GEMINI_API_KEY."""
    from tests.fake_gemini import FakeGeminiServer

    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")
    server = FakeGeminiServer(api_key="gm-test").start()
    yield server
    server.stop()


@pytest.fixture
def fake_openai():
    """A local OpenAI-compatible server (tests/fake_openai.py), scripted per test."""
    from tests.fake_openai import FakeOpenAIServer

    server = FakeOpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def transactional_db(transactional_db):
    """Lift the published-release guards before the flush that ends a transactional test.

    SQLite flushes with row-by-row DELETEs, which the guard triggers refuse once a release is
    published (PostgreSQL's TRUNCATE does not fire them). `_release_guards_present` puts them
    back before the next test.
    """
    yield
    if connection.vendor == "sqlite":
        from metrics_registry.db_guards import guards_remove

        with connection.schema_editor() as editor:
            guards_remove(editor)


@pytest.fixture(autouse=True)
def _release_guards_present(request, django_db_blocker):
    if connection.vendor != "sqlite" or "django_db_setup" not in request.fixturenames:
        yield
        return
    from metrics_registry.db_guards import TRIGGER_NAMES, guards_install, guards_installed

    with django_db_blocker.unblock():
        if guards_installed(connection) != set(TRIGGER_NAMES):
            with connection.schema_editor() as editor:
                guards_install(editor)
    yield


@pytest.fixture(autouse=True)
def _health_probe_connection_closed():
    """The health prober's own database connection must not outlive a test's database."""
    yield
    from core.health import probes_close

    probes_close()


@pytest.fixture
def sent_tasks(monkeypatch) -> SentTasks:
    """Tasks the code queues by name stay here instead of reaching the broker (see
    `tests.queued.SentTasks`; `sent_tasks.inline[name] = fn` runs one in this process)."""
    from celery import current_app

    sent = SentTasks()
    monkeypatch.setattr(current_app, "send_task", sent.send_task)
    return sent
