"""Pending reconciliations written before `next_check_at` get a due time: the time of their last
lookup, so they are due at once and the next lookup sets their pace. Without one, a pending row
would never be selected again."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.db.models import F
from django.db.models.functions import Coalesce, Now


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    reconciliation = apps.get_model("llm", "CallReconciliation")
    reconciliation.objects.filter(state="pending", next_check_at__isnull=True).update(
        next_check_at=Coalesce(F("checked_at"), Now())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0020_reconciliation_back_off"),
    ]

    operations = [
        migrations.RunPython(forward, migrations.RunPython.noop),
    ]
