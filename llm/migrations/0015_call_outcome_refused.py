"""The outcome "refused" (a provider declined the request as sent), counted among failures by
the call log's usage triggers: the triggers of `0012_run_usage_triggers` again, with "refused"
in their list of failed outcomes. No attempt had that outcome before, so the stored totals
stand as they are."""

import importlib

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

_TRIGGERS = importlib.import_module("llm.migrations.0012_run_usage_triggers")
_BEFORE = "'malformed', 'failed')"
_AFTER = "'malformed', 'failed', 'refused')"


def _swap(statement: str, errors_end: str) -> str:
    """`statement` of 0012 with the failed outcomes' list ending in `errors_end`."""
    if not _TRIGGERS.ERRORS.endswith(_BEFORE):
        raise RuntimeError("0012's list of failed outcomes is not the one this migration extends")
    return statement.replace(_TRIGGERS.ERRORS, _TRIGGERS.ERRORS[: -len(_BEFORE)] + errors_end)


# The totals of the attempts stored so far, as the triggers now count them.
BACKFILL = _swap(_TRIGGERS.BACKFILL, _AFTER)


def _triggers(errors_end: str) -> dict[str, list[str]]:
    def swap(statement: str) -> str:
        return _swap(statement, errors_end)

    return {
        "postgresql": [_TRIGGERS.PG_BACKWARD, swap(_TRIGGERS.PG_FORWARD)],
        "sqlite": [*_TRIGGERS.SQLITE_BACKWARD, *(swap(s) for s in _TRIGGERS.SQLITE_FORWARD)],
    }


def _replace(schema_editor: BaseDatabaseSchemaEditor, errors_end: str) -> None:
    vendor = schema_editor.connection.vendor
    statements = _triggers(errors_end).get(vendor)
    if statements is None:
        raise NotImplementedError(f"No call-log usage triggers for {vendor}")
    _TRIGGERS._run(schema_editor, statements)


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _replace(schema_editor, _AFTER)


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _replace(schema_editor, _BEFORE)


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0014_modelconfiguration_published_in_run"),
    ]

    operations = [
        migrations.AlterField(
            model_name="llmcall",
            name="outcome",
            field=models.CharField(
                choices=[
                    ("success", "Success"),
                    ("cached", "Cached"),
                    ("http_error", "HTTP error"),
                    ("rate_limited", "Rate limited"),
                    ("timeout", "Timeout"),
                    ("connection_error", "Connection error"),
                    ("invalid_output", "Invalid output"),
                    ("malformed", "Malformed response"),
                    ("failed", "Failed"),
                    ("refused", "Refused by the provider"),
                    ("unknown", "Outcome unknown"),
                ],
                max_length=20,
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
