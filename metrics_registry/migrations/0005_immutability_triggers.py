from django.db import migrations

from metrics_registry.db_guards import (
    VERSION_CONTENT_BEFORE_LANGUAGE,
    guards_install,
    guards_remove,
)


def install(apps, schema_editor):
    guards_install(schema_editor, version_content=VERSION_CONTENT_BEFORE_LANGUAGE)


def remove(apps, schema_editor):
    guards_remove(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("metrics_registry", "0004_load_label_categories")]

    operations = [migrations.RunPython(install, remove)]
