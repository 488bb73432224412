"""The rubrics app sits above evaluations: the run machinery reaches it only through the work
kinds it registers (`evaluations.work`), never by importing it, even inside a function."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BELOW_RUBRICS = {"core", "stats", "llm", "metrics_registry", "evaluations"}
APPS = BELOW_RUBRICS | {"submissions", "rubrics", "review", "results"}
# Demo seeding is being moved to the top layer; until then the demo run names rubric items.
PENDING = {"evaluations/demo.py"}


def _imported_apps(app: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / app).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in APPS and top != app:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_evaluations_does_not_import_rubrics():
    assert _imported_apps("evaluations").get("rubrics", set()) <= PENDING


def test_rubrics_imports_only_the_apps_below_it():
    assert set(_imported_apps("rubrics")) <= BELOW_RUBRICS
