"""The call log's usage triggers again on SQLite, and its totals recounted.

Adding `LLMCall.batched` (0017) rebuilds the call-log table on SQLite (a new column with a
default), and a rebuilt table has lost its triggers: runs then counted no attempts, and a
spending cap never tripped. PostgreSQL adds the column in place and keeps them. The triggers of
0015 (0012's, with "refused" among failures) are made again and the totals recounted from the
call log, so attempts stored while they were missing are counted too.
"""

import importlib

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

_REFUSED = importlib.import_module("llm.migrations.0015_call_outcome_refused")
_TRIGGERS = importlib.import_module("llm.migrations.0012_run_usage_triggers")


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    statements = _REFUSED._triggers(_REFUSED._AFTER)["sqlite"]
    _TRIGGERS._run(
        schema_editor, [*statements, "DELETE FROM llm_runusagetotal", _REFUSED.BACKFILL]
    )


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0017_batch_requests_and_batch_price"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
