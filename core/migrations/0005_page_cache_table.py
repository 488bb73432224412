from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    """The page cache's own table beside the rate-limit table, on the embedded default;
    createcachetable skips existing tables and ignores caches that are not database tables."""
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("core", "0004_role_changes_and_cache_table")]

    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
