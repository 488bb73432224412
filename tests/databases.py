"""Test databases built once per schema and cloned for each test process.

Migrating a fresh test database costs tens of seconds, and a run on both cores (or the two
lanes of CI, one after the other) would pay it once per process. Instead the first process
migrates a *template*, named by a digest of everything that decides the schema (the migration
files, the project modules they import, the lock file that pins the third-party apps, the
installed apps), and every process copies it: PostgreSQL's `CREATE DATABASE ... TEMPLATE`, a
file copy for SQLite. A template whose inputs change gets a new name, so a stale one is never
used; `pytest --create-db` drops it first, so the run migrates it anew.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from core.processes import process_alive

ROOT = Path(__file__).resolve().parent.parent
# Templates of other checkouts and earlier schemas kept on a PostgreSQL server, newest first.
TEMPLATES_KEPT = 4


def _project_module_file(name: str) -> Path | None:
    path = ROOT.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_project_files(path: Path) -> set[Path]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            if (module := _project_module_file(name)) is not None:
                found.add(module)
    return found


def schema_inputs() -> list[Path]:
    """The files a migrated database depends on: every migration of the project's apps and,
    transitively, the project modules they import (data migrations read the taxonomy, the
    guard triggers' SQL, ...)."""
    pending = {path for path in ROOT.glob("*/migrations/*.py")}
    seen: set[Path] = set()
    while pending:
        path = pending.pop()
        seen.add(path)
        pending |= _imported_project_files(path) - seen
    return sorted(seen)


def schema_digest(vendor: str) -> str:
    digest = hashlib.sha256(vendor.encode())
    digest.update("\n".join(settings.INSTALLED_APPS).encode())
    for path in [*schema_inputs(), ROOT / "requirements-dev.lock"]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


class PostgresTemplates:
    """Templates and clones as databases on the test server, built under an advisory lock."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection
        # Identifiers stop at 63 bytes; the suffixes below take at most 26.
        self.base = f"test_{connection.settings_dict['NAME']}"[:30]

    def template_name(self, digest: str) -> str:
        return f"{self.base}_tpl_{digest}"

    def clone_name(self) -> str:
        return f"{self.base}_{os.getpid()}"

    def _databases(self, cursor) -> list[str]:
        cursor.execute("SELECT datname FROM pg_database ORDER BY oid DESC")
        return [row[0] for row in cursor.fetchall()]

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self.connection._nodb_cursor() as cursor:
            key = int(hashlib.sha256(self.base.encode()).hexdigest()[:15], 16)
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
            try:
                yield
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])

    def exists(self, name: str) -> bool:
        with self.connection._nodb_cursor() as cursor:
            return name in self._databases(cursor)

    def drop(self, name: str) -> None:
        quote = self.connection.ops.quote_name
        with self.connection._nodb_cursor() as cursor:
            # FORCE ends the sessions a test's worker processes may have left behind.
            cursor.execute(f"DROP DATABASE IF EXISTS {quote(name)} WITH (FORCE)")

    def publish(self, building: str, template: str) -> None:
        quote = self.connection.ops.quote_name
        with self.connection._nodb_cursor() as cursor:
            cursor.execute(f"ALTER DATABASE {quote(building)} RENAME TO {quote(template)}")

    def clone(self, template: str, clone: str) -> None:
        quote = self.connection.ops.quote_name
        self.drop(clone)
        with self.connection._nodb_cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {quote(clone)} TEMPLATE {quote(template)}")

    def forget_stale(self, template: str) -> None:
        """Drop clones whose test process is gone and all but the newest few templates."""
        with self.connection._nodb_cursor() as cursor:
            names = self._databases(cursor)
        templates = [name for name in names if name.startswith(f"{self.base}_tpl_")]
        stale = [name for name in templates if name != template][TEMPLATES_KEPT - 1 :]
        for name in names:
            suffix = name.removeprefix(f"{self.base}_")
            if name != suffix and suffix.isdigit() and not process_alive(int(suffix)):
                stale.append(name)
        for name in stale:
            self.drop(name)


class SqliteTemplates:
    """Templates and clones as files beside the test database, built under a file lock."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection
        self.clone_path = Path(connection.settings_dict["TEST"]["NAME"])
        self.folder = self.clone_path.parent

    def template_name(self, digest: str) -> str:
        return str(self.folder / f"test-template-{digest}.sqlite3")

    def clone_name(self) -> str:
        return str(self.clone_path)

    @contextmanager
    def lock(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "test-template.lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def exists(self, name: str) -> bool:
        return Path(name).is_file()

    def drop(self, name: str) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(name + suffix).unlink(missing_ok=True)

    def publish(self, building: str, template: str) -> None:
        os.replace(building, template)

    def clone(self, template: str, clone: str) -> None:
        self.drop(clone)
        shutil.copyfile(template, clone)

    def forget_stale(self, template: str) -> None:
        others = sorted(
            (path for path in self.folder.glob("test-template-*.sqlite3") if str(path) != template),
            key=lambda path: path.stat().st_mtime,
            reverse=True,
        )
        for path in others[TEMPLATES_KEPT - 1 :]:
            self.drop(str(path))
        for path in self.folder.glob("test-impactbench-*.sqlite3"):
            pid = path.name.removeprefix("test-impactbench-").removesuffix(".sqlite3")
            if pid.isdigit() and not process_alive(int(pid)):
                self.drop(str(path))


def _templates(connection: BaseDatabaseWrapper) -> SqliteTemplates | PostgresTemplates:
    if connection.vendor == "sqlite":
        return SqliteTemplates(connection)
    return PostgresTemplates(connection)


def _point_at(alias: str, name: str) -> None:
    connections[alias].close()
    connections[alias].settings_dict["NAME"] = name
    settings.DATABASES[alias]["NAME"] = name


def clone_setup(*, alias: str = "default", verbosity: int = 0) -> str:
    """Give this process its own test database, cloned from the schema's template (migrating
    the template first if no process has yet). Returns the database's name."""
    connection = connections[alias]
    templates = _templates(connection)
    template = templates.template_name(schema_digest(connection.vendor))
    with templates.lock():
        if not templates.exists(template):
            building = template + (".building" if connection.vendor == "sqlite" else "_building")
            connection.settings_dict["TEST"]["NAME"] = building
            connection.creation.create_test_db(
                verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False
            )
            connections.close_all()
            templates.publish(building, template)
        templates.forget_stale(template)
        clone = templates.clone_name()
        templates.clone(template, clone)
    connection.settings_dict["TEST"]["NAME"] = clone
    _point_at(alias, clone)
    return clone


def template_drop(*, alias: str = "default") -> None:
    """Drop the current schema's template, so that the next process to need it migrates it
    anew (`pytest --create-db`, once for the run before any test process starts)."""
    connection = connections[alias]
    templates = _templates(connection)
    with templates.lock():
        templates.drop(templates.template_name(schema_digest(connection.vendor)))


def clone_teardown(*, alias: str = "default") -> None:
    connection = connections[alias]
    name = connection.settings_dict["NAME"]
    connections.close_all()
    templates = _templates(connection)
    templates.drop(name)
