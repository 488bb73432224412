from django.db import migrations

from metrics_registry.taxonomy import AREAS


def load_taxonomy(apps, schema_editor):
    Area = apps.get_model("metrics_registry", "Area")
    Subarea = apps.get_model("metrics_registry", "Subarea")
    for area_position, spec in enumerate(AREAS):
        area, _ = Area.objects.update_or_create(
            slug=spec["slug"],
            defaults={
                "name": spec["name"],
                "description": spec["description"],
                "position": area_position,
            },
        )
        for position, (slug, name, description) in enumerate(spec["subareas"]):
            Subarea.objects.update_or_create(
                slug=slug,
                defaults={
                    "area": area,
                    "name": name,
                    "description": description,
                    "position": position,
                },
            )


def unload_taxonomy(apps, schema_editor):
    slugs = [spec["slug"] for spec in AREAS]
    apps.get_model("metrics_registry", "Subarea").objects.filter(area__slug__in=slugs).delete()
    apps.get_model("metrics_registry", "Area").objects.filter(slug__in=slugs).delete()


class Migration(migrations.Migration):
    dependencies = [("metrics_registry", "0001_initial")]

    operations = [migrations.RunPython(load_taxonomy, unload_taxonomy)]
