"""Give every existing queue item the language of what its rater reads.

A frozen copy of the adapters' `language_source` as it stands now (kind → model and lookup),
so the migration keeps working however the adapters change. Items whose object has no
language, or is gone, keep the field's default (`en`).
"""

from django.db import migrations
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Coalesce, NullIf

LANGUAGE_SOURCES = {
    "metric": ("metrics_registry", "Metric", "current_version__language"),
    "scenario": ("evaluations", "Scenario", "language"),
    "conversation": ("evaluations", "Conversation", "scenario__language"),
    "judge_verdict": ("evaluations", "Conversation", "scenario__language"),
    "external_panel": ("evaluations", "Conversation", "scenario__language"),
    "simulator_pair": ("evaluations", "Conversation", "scenario__language"),
    "rubric_criterion": ("rubrics", "RubricCriterion", "item__language"),
    "user_priorities": ("evaluations", "RubricResponse", "item__language"),
}


def fill_languages(apps, schema_editor):
    QueueItem = apps.get_model("review", "QueueItem")
    for kind, (app_label, model_name, lookup) in LANGUAGE_SOURCES.items():
        model = apps.get_model(app_label, model_name)
        language = model.objects.filter(pk=OuterRef("object_id")).values(lookup)[:1]
        # One UPDATE per kind; an object with no language (or gone) leaves its item in English.
        QueueItem.objects.filter(kind=kind).update(
            language=Coalesce(NullIf(Subquery(language), Value("")), Value("en"))
        )


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0026_scenario_language_and_translation_provenance"),
        ("metrics_registry", "0009_metric_version_language"),
        ("rubrics", "0004_rubric_item_language_validated"),
        ("review", "0006_queue_item_language"),
    ]

    operations = [migrations.RunPython(fill_languages, migrations.RunPython.noop)]
