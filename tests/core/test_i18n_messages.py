"""Messages raised or flashed in Python reach people in their language.

A message given to `ApplicationError` (and the gateway's and the evaluation engine's errors
built on it), to Django's or DRF's `ValidationError`, to the other exceptions whose text is
shown (`InvalidIdentifier`, `ExportUnavailable`, `EgressRefused`, the transcript importer's
line problems) or to `messages.<level>` must pass through gettext, gettext_lazy, ngettext or
pgettext: a bare string, an f-string, or a `+` / `%` / conditional built from them fails here,
naming file:line.

The walk skips what no reader of the site sees: .venv, tests, migrations, benchmarks, scripts
and management commands (command-line output stays English). The allow-list below names the
few messages that never reach a page, each with its reason.
"""

import ast
import os
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".venv",
        "node_modules",
        "var",
        "static",
        "tests",
        "migrations",
        "benchmarks",
        "scripts",
    }
)

# Exceptions whose message a person reads: as a form error, a flash message, a 400 page or the
# API's JSON "detail" (core.api.exception_handler, core.middleware.bad_request).
USER_FACING_EXCEPTIONS = frozenset(
    {
        "ApplicationError",
        "ValidationError",
        "LLMError",
        "StructuredOutputError",
        "ConversationFailure",
        "TranscriptFileInvalid",
        "_LineProblem",
        "InvalidIdentifier",
        "ExportUnavailable",
        "EgressRefused",
    }
)
MESSAGE_LEVELS = frozenset({"debug", "info", "success", "warning", "error"})
TRANSLATING_FUNCTIONS = frozenset(
    {
        "_",
        "gettext",
        "gettext_lazy",
        "ngettext",
        "ngettext_lazy",
        "pgettext",
        "pgettext_lazy",
        "npgettext",
        "npgettext_lazy",
    }
)

# Messages that never reach a page: (path, the message's first words) → why.
ALLOWED = {
    ("core/workers.py", "No Celery worker answered"): (
        "raised only by `manage.py ping_worker`: command-line output stays English"
    ),
    ("demo/synthetic.py", ""): (
        "the synthetic load-test data set's checks, raised only by "
        "`manage.py generate_synthetic_dataset`: command-line output stays English"
    ),
    ("metrics_registry/models/metrics.py", "A metric version cannot be changed"): (
        "a guard in MetricVersion.save against code that edits a stored version; no form or "
        "view offers that edit, so no reader sees it"
    ),
}


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_messages_call(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "messages"
        and (func.attr in MESSAGE_LEVELS or func.attr == "add_message")
    )


def _message_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments of `call` that carry a message a person reads ([] for other calls)."""
    keywords = [k.value for k in call.keywords if k.arg == "message"]
    if _is_messages_call(call):
        position = 2 if _called_name(call.func) == "add_message" else 1
        return call.args[position : position + 1] + keywords
    if _called_name(call.func) in USER_FACING_EXCEPTIONS:
        return call.args[:1] + keywords
    return []


def _bare_text(node: ast.expr) -> str | None:
    """The untranslated text `node` builds (its first words), or None when it builds none."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.strip() else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant)) or "f-string"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _bare_text(node.left) or (
            _bare_text(node.right) if isinstance(node.op, ast.Add) else None
        )
    if isinstance(node, ast.IfExp):
        return _bare_text(node.body) or _bare_text(node.orelse)
    if isinstance(node, ast.Dict):  # ValidationError({"field": message})
        return next(filter(None, (_bare_text(v) for v in node.values)), None)
    if isinstance(node, ast.List | ast.Tuple):  # ValidationError([...]), TranscriptFileInvalid
        return next(filter(None, (_bare_text(e) for e in node.elts)), None)
    return None  # a call (gettext… or a helper), a name, an attribute: not a literal here


def untranslated_messages(source: str, path: str) -> list[str]:
    """`path:line: text` for every user-facing call in `source` given an untranslated message."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        for argument in _message_arguments(node):
            text = _bare_text(argument)
            if text is None or _allowed(path, text):
                continue
            found.append((argument.lineno, f"{path}:{argument.lineno}: {text[:60]!r}"))
    return [line for _number, line in sorted(found)]


def _allowed(path: str, text: str) -> bool:
    return any(path == p and text.startswith(start) for p, start in ALLOWED)


def _project_sources() -> list[Path]:
    """The project's Python files, skipped directories pruned as the walk goes (not after:
    .venv alone holds tens of thousands of files)."""
    sources = []
    for directory, subdirectories, files in os.walk(ROOT):
        parts = Path(directory).relative_to(ROOT).parts
        if parts[-1:] == ("management",):
            subdirectories[:] = [d for d in subdirectories if d != "commands"]
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        sources += [Path(directory) / name for name in sorted(files) if name.endswith(".py")]
    return sources


def test_every_message_a_person_reads_goes_through_gettext():
    sources = _project_sources()
    assert len(sources) > 200  # the walk found the project, not an empty directory
    found = []
    for path in sources:
        found += untranslated_messages(path.read_text(), path.relative_to(ROOT).as_posix())
    assert not found, "Wrap these messages in gettext (django.utils.translation):\n" + "\n".join(
        found
    )


def test_the_allow_list_names_messages_that_still_exist():
    for path, start in ALLOWED:
        assert start in (ROOT / path).read_text(), (path, start)


SNIPPET = """
from django.contrib import messages
from django.utils.translation import gettext as _

def view(request, run):
    messages.error(request, "Run paused.")
    messages.success(request, _("Run paused."))
    messages.add_message(request, messages.INFO, f"Run {run.pk} paused.")
    raise ApplicationError(f"This run is already {run.status}.")

def service(run, count):
    if count:
        raise ApplicationError("Only " + str(count) + " left.")
    if run:
        raise ApplicationError("Run %s is paused." % run.pk)
    raise ApplicationError(_("This run is already %(status)s.") % {"status": run.status})

def form_clean(value, problem):
    raise forms.ValidationError({"name": "Enter a name."})
    raise ValidationError(problem)
    raise ApplicationError("Yes." if value else _("No."))
"""


def test_the_checker_names_each_untranslated_message_by_file_and_line():
    found = untranslated_messages(SNIPPET, "app/views.py")
    assert [line.split(":")[1] for line in found] == ["6", "8", "9", "13", "15", "19", "21"]
    assert found[0] == "app/views.py:6: 'Run paused.'"
    assert found[2] == "app/views.py:9: 'This run is already .'"


def test_the_checker_passes_translated_messages_and_other_calls():
    translated = """
def view(request, n):
    messages.info(request, ngettext("%(n)d item.", "%(n)d items.", n) % {"n": n})
    raise ApplicationError(pgettext("rating", "Skipped."))
    raise ValueError("not shown to anyone")
    print(f"{n} lines")
"""
    assert untranslated_messages(translated, "app/views.py") == []


def test_the_walk_skips_command_line_code():
    sources = {p.relative_to(ROOT).as_posix() for p in _project_sources()}
    assert "core/workers.py" in sources
    assert not any("/management/commands/" in s for s in sources)
    assert not any(s.startswith(("tests/", "benchmarks/", "scripts/")) for s in sources)
