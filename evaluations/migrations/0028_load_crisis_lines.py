from django.db import migrations

# National lines as their operators publish them; this list only seeds the table.
CRISIS_LINES = [
    (
        "US",
        "988 Suicide & Crisis Lifeline",
        "988 (call or text)",
        "https://988lifeline.org",
        ["en", "es"],
    ),
    ("CA", "9-8-8 Suicide Crisis Helpline", "988 (call or text)", "https://988.ca", ["en", "fr"]),
    ("GB", "Samaritans", "116 123", "https://www.samaritans.org", ["en"]),
    (
        "ES",
        "Línea 024 de atención a la conducta suicida",
        "024",
        "https://www.sanidad.gob.es/linea024/",
        ["es"],
    ),
    ("MX", "Línea de la Vida", "800 911 2000", "https://www.gob.mx/salud/conadic", ["es"]),
    ("IN", "Tele-MANAS", "14416", "https://telemanas.mohfw.gov.in", ["hi", "en"]),
]


def load(apps, schema_editor):
    CrisisLine = apps.get_model("evaluations", "CrisisLine")
    for country, name, contact, url, languages in CRISIS_LINES:
        CrisisLine.objects.get_or_create(
            country=country,
            name=name,
            defaults={"contact": contact, "url": url, "languages": languages},
        )


def unload(apps, schema_editor):
    CrisisLine = apps.get_model("evaluations", "CrisisLine")
    for country, name, *_rest in CRISIS_LINES:
        CrisisLine.objects.filter(country=country, name=name).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0027_crisis_lines_and_scenario_country"),
    ]

    operations = [migrations.RunPython(load, unload)]
