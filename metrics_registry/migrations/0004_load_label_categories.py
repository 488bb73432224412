from django.db import migrations

from metrics_registry.taxonomy import LABEL_CATEGORIES


def load_label_categories(apps, schema_editor):
    LabelCategory = apps.get_model("metrics_registry", "LabelCategory")
    for position, (slug, name, polarity, description) in enumerate(LABEL_CATEGORIES):
        LabelCategory.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "polarity": polarity,
                "description": description,
                "position": position,
            },
        )


def unload_label_categories(apps, schema_editor):
    slugs = [slug for slug, *_ in LABEL_CATEGORIES]
    apps.get_model("metrics_registry", "LabelCategory").objects.filter(slug__in=slugs).delete()


class Migration(migrations.Migration):
    dependencies = [("metrics_registry", "0003_registry_metrics_and_releases")]

    operations = [migrations.RunPython(load_label_categories, unload_label_categories)]
