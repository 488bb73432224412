"""The documentation holds together: README.md and docs/*.md.

Every relative link reaches a file (and a `file.md#anchor` link a heading of that file, by
GitHub's anchor rules); README.md stays a short first read; and the configuration table of
docs/operations.md has one row for every environment variable the settings read, and names
only variables the platform reads.
"""

from __future__ import annotations

import ast
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
OPERATIONS = DOCS / "operations.md"
SETTINGS = ROOT / "impactbench_site" / "settings"
# gunicorn's own settings file reads variables the same way and is documented in the same table.
# The test profile is not configured by anyone: it reads only what pytest-xdist sets for each
# test process (docs/testing.md).
SETTINGS_FILES = [
    *sorted(path for path in SETTINGS.glob("*.py") if path.name != "test.py"),
    ROOT / "impactbench_site" / "gunicorn.conf.py",
]
README_MAX_LINES = 350

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
CODE_SPAN = re.compile(r"(`+)((?:(?!\n[ \t]*\n)[\s\S])+?)\1")
# [text](target) and ![alt](target), with an optional "title"; targets hold no spaces here.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # the text, which may hold one level of [brackets]
    r"\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"  # (target "optional title")
)
REFERENCE_LINK = re.compile(r"^[ ]{0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?", re.M)
VARIABLE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def heading_text(markdown: str) -> str:
    """A heading as GitHub renders it to text: code spans kept, links and emphasis dropped."""
    text = INLINE_CODE.sub(lambda m: m.group(2), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("*", "")


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case; letters, marks, numbers, connector
    punctuation (the underscore), spaces and hyphens kept, the rest dropped; spaces to hyphens."""
    kept = (
        ch
        for ch in heading_text(text).strip().lower()
        if ch in " -" or unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc"
    )
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor, duplicates numbered -1, -2, … as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link outside code, inline or fenced. The text is read as a
    whole, so code spans and link texts that wrap onto the next line count as they render."""
    numbered = dict(prose_lines(path))
    total = len(path.read_text(encoding="utf-8").splitlines())
    # Fenced lines become blank lines, so positions keep their line numbers.
    text = "\n".join(numbered.get(n, "") for n in range(1, total + 1))
    # A code span ends at its paragraph; its text becomes blanks (line breaks kept).
    text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = [(m.start(), m.group(1)) for m in INLINE_LINK.finditer(text)]
    found += [(m.start(), m.group(1)) for m in REFERENCE_LINK.finditer(text)]
    return [(text.count("\n", 0, start) + 1, target) for start, target in sorted(found)]


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target))


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, target in links(path):
        if is_external(target):
            continue
        where = f"{path.relative_to(root)}:{number}: {target}"
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part)
        if not file_part:
            destination = path
        elif file_part.startswith("/"):
            destination = root / file_part.lstrip("/")
        else:
            destination = (path.parent / file_part).resolve()
        if not destination.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and destination.suffix == ".md" and unquote(anchor) not in anchors(destination):
            problems.append(f"{where} (no heading with that anchor)")
    return problems


def test_the_documents_exist():
    expected = {
        "README.md",
        "operations.md",
        "security.md",
        "statistics-and-methodology.md",
        "interoperability.md",
        "performance.md",
        "testing.md",
        "layout.md",
    }
    assert expected <= {p.name for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert links(path), f"{path.relative_to(ROOT)} links nowhere"
    assert broken_links(path) == []


def test_the_link_checker_sees_a_broken_link(tmp_path):
    (tmp_path / "other.md").write_text(
        "# Other page\n\n## A `code` heading, twice\n\n## A `code` heading, twice\n"
    )
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#a-code-heading-twice-1) [ok](#page) [ok](other.md) [web](https://x.org/#no)\n"
        "`[in code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n"
        "[gone](missing.md) [no anchor](other.md#nowhere) [self](#nowhere)\n"
        "`a code span that\nwraps [x](in-code.md)` and a [link text that\nwraps](wrapped.md)\n\n"
        "[ref]: referenced.md\n"
    )
    problems = broken_links(page, root=tmp_path)
    assert problems == [
        "page.md:9: missing.md (no such file)",
        "page.md:9: other.md#nowhere (no heading with that anchor)",
        "page.md:9: #nowhere (no heading with that anchor)",
        "page.md:11: wrapped.md (no such file)",
        "page.md:14: referenced.md (no such file)",
    ]


def test_slugs_follow_githubs_rules():
    assert slug("Interoperability: HealthBench, Inspect AI, run exports") == (
        "interoperability-healthbench-inspect-ai-run-exports"
    )
    assert slug("A release's expert figures") == "a-releases-expert-figures"
    assert slug("PostgreSQL, Redis and more workers") == "postgresql-redis-and-more-workers"
    assert slug("`DEMO_SEED_STEPS` and τ-b") == "demo_seed_steps-and-τ-b"
    assert slug("Users' priorities against clinicians' weights") == (
        "users-priorities-against-clinicians-weights"
    )


def test_readme_stays_a_first_read():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES
    headings = {m.group(2) for _, line in prose_lines(README) if (m := HEADING.match(line))}
    kept = {"Two commands", "Roles", "Configuration", "Tests and CI", "Where to go next"}
    assert kept <= headings


# --- The configuration table --------------------------------------------------------------------


def variables_read(path: Path) -> set[str]:
    """Names of the environment variables a Python file reads: env("X"), env.<type>("X"),
    os.environ.get("X"), os.environ.setdefault("X", …), os.environ["X"], os.getenv("X")."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            reads = (
                (isinstance(func, ast.Name) and func.id == "env")
                or (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "env"
                )
                or (
                    isinstance(func, ast.Attribute)
                    and func.attr in {"get", "setdefault"}
                    and ast.unparse(func.value) == "os.environ"
                )
                or ast.unparse(func) == "os.getenv"
            )
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            reads, first = True, node.slice
        else:
            continue
        if (
            reads
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and VARIABLE.match(first.value)
        ):
            names.add(first.value)
    return names


def settings_variables() -> set[str]:
    return set().union(*(variables_read(path) for path in SETTINGS_FILES))


def platform_variables() -> set[str]:
    """Every variable the platform reads: its code (tests and benchmarks aside) and compose.yaml."""
    skip = {".venv", "var", "tests", "benchmarks", "node_modules", ".git"}
    names = set()
    # Walked with the skipped folders pruned, not filtered afterwards: .venv alone holds tens of
    # thousands of files.
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in skip]
        for name in files:
            if name.endswith(".py"):
                names |= variables_read(Path(folder) / name)
    compose = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    names |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", compose))
    return names


def configuration_rows() -> list[list[str]]:
    """The variables named in the first column of each row of docs/operations.md's table under
    "Configuration"."""
    text = OPERATIONS.read_text(encoding="utf-8")
    section = re.search(r"^## Configuration\n(.*?)(?=^## )", text, flags=re.M | re.S)
    assert section, "docs/operations.md has no Configuration section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    assert len(rows) > 2, "the Configuration section has no table"
    body = rows[2:]  # after the header and its separator
    return [re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1]) for row in body]


def test_the_settings_reader_finds_the_variables():
    found = settings_variables()
    # The parser itself: a new way of reading variables must not make the table checks vacuous.
    assert {
        "DJANGO_SECRET_KEY",
        "DJANGO_SECURE_HSTS_PRELOAD",
        "DATABASE_CONNECT_TIMEOUT_SECONDS",
        "LLM_API_KEY_HOSTS",
        "IMPACTBENCH_VAR_DIR",
        "SUBMISSION_REQUEUE_INTERVAL_SECONDS",
        "GUNICORN_WORKERS",
    } <= found
    assert len(found) > 60


def test_every_variable_the_settings_read_is_in_the_configuration_table():
    documented = {name for row in configuration_rows() for name in row}
    assert sorted(settings_variables() - documented) == []


def test_each_variable_has_one_row():
    seen: dict[str, int] = {}
    for row in configuration_rows():
        assert row, "a configuration row names no variable in its first column"
        for name in row:
            seen[name] = seen.get(name, 0) + 1
    assert sorted(name for name, count in seen.items() if count > 1) == []


def test_every_variable_in_the_table_is_read_by_the_platform():
    documented = {name for row in configuration_rows() for name in row}
    assert sorted(documented - platform_variables()) == []


def test_the_backup_commands_are_the_ones_the_backup_test_runs():
    """tests/core/test_backups.py runs these flags; the document must give the same."""
    text = OPERATIONS.read_text(encoding="utf-8")
    section = re.search(r"^## Backups and restore\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert section
    for command in (
        "pg_dump --format=custom --no-owner --file=",
        "createdb --maintenance-db=",
        "pg_restore --no-owner --exit-on-error --dbname=",
    ):
        assert command in section.group(1)
