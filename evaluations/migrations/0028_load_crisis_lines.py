from django.db import migrations

from evaluations.crisis_seed import CRISIS_LINES, crisis_lines_write


def load(apps, schema_editor):
    crisis_lines_write(apps=apps, using=schema_editor.connection.alias)


def unload(apps, schema_editor):
    CrisisLine = apps.get_model("evaluations", "CrisisLine")
    for country, name, *_rest in CRISIS_LINES:
        CrisisLine.objects.filter(country=country, name=name).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0027_crisis_lines_and_scenario_country"),
    ]

    operations = [migrations.RunPython(load, unload)]
