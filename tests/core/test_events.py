"""Apps tell the apps above them what happened through typed events: one frozen dataclass per
event, declared by the app that publishes it, handed to the handlers after commit."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from core import events

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
APPS = [p for p in PACKAGES if p not in ("tests", "benchmarks", "interop")]


def _declared() -> list[type[events.Event]]:
    for app in APPS:
        if (ROOT / app / "events.py").is_file():
            importlib.import_module(f"{app}.events")
    return events.event_classes()


def _published(path: Path) -> list[tuple[int, str, str]]:
    """(line, class name, module it is imported from) of each `events.publish(Class(...))`."""
    app = path.relative_to(ROOT).parts[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    origin: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = path.relative_to(ROOT).with_suffix("").parts[: -node.level]
                base = ".".join(parts + ((node.module,) if node.module else ()))
            else:
                base = node.module or ""
            for alias in node.names:
                origin[alias.asname or alias.name] = base
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "publish"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "events"
        ):
            event = node.args[0] if node.args else None
            name = (
                event.func.id
                if isinstance(event, ast.Call) and isinstance(event.func, ast.Name)
                else ""
            )
            found.append((node.lineno, name, origin.get(name, f"{app} (not imported)")))
    return found


def test_every_event_is_a_frozen_dataclass_in_its_producer_s_events_module():
    declared = _declared()
    assert {cls.__name__ for cls in declared} >= {"RunCompleted", "RunDesignated", "RatingsChanged"}
    for cls in declared:
        assert dataclasses.is_dataclass(cls), cls
        assert cls.__dataclass_params__.frozen, f"{cls.__qualname__} is not frozen"
        app, _, module = cls.__module__.partition(".")
        assert app in APPS, f"{cls.__qualname__} is in {cls.__module__}"
        assert module == "events", f"{cls.__qualname__} is in {cls.__module__}"


@pytest.mark.slow(reason="parses every module of every app")
def test_an_app_publishes_only_the_events_it_declares():
    sites = [
        (path.relative_to(ROOT), line, name, origin)
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
        for line, name, origin in _published(path)
    ]
    assert sites, "no publish call found: the scan is blind"
    wrong = [
        f"{path}:{line} publishes {name or 'something other than Event(...)'} from {origin}"
        for path, line, name, origin in sites
        if origin != f"{path.parts[0]}.events"
    ]
    assert wrong == []


def test_an_event_cannot_change_once_published():
    from evaluations.events import RunCompleted

    event = RunCompleted(run_id=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.run_id = 2  # type: ignore[misc]


def _publish_and_roll_back(event: events.Event) -> None:
    from django.db import transaction

    with transaction.atomic():
        events.publish(event)
        raise RuntimeError("rolled back")


@pytest.mark.django_db
def test_handlers_receive_the_instance_after_commit_and_never_after_a_rollback(
    django_capture_on_commit_callbacks,
):
    from evaluations.events import RunDesignated

    received = []
    events.subscribe(RunDesignated, received.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            events.publish(RunDesignated(run_id=7))
            assert received == []  # not before the commit
        assert received == [RunDesignated(run_id=7)]
        with pytest.raises(RuntimeError, match="rolled back"):
            _publish_and_roll_back(RunDesignated(run_id=8))
        assert received == [RunDesignated(run_id=7)]
        with pytest.raises(TypeError):
            events.publish("evaluations.run_designated")  # type: ignore[arg-type]
    finally:
        events.unsubscribe(RunDesignated, received.append)
