from django.db import migrations


def name_site(apps, schema_editor):
    Site = apps.get_model("sites", "Site")
    Site.objects.update_or_create(
        id=1, defaults={"domain": "impactbench.org", "name": "ImpactBench"}
    )


class Migration(migrations.Migration):
    dependencies = [("core", "0002_create_role_groups"), ("sites", "0002_alter_domain_unique")]

    operations = [migrations.RunPython(name_site, migrations.RunPython.noop)]
