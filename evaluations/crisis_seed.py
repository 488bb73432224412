"""The national crisis lines a new database starts with.

The data migration `0028_load_crisis_lines` writes them once; `crisis_lines_seed`, connected to
post_migrate, writes them again into a database that has none (a flushed one: test runs,
`manage.py flush`). It adds nothing to a table with rows, so a line a maintainer deleted or
corrected stays as they left it.
"""

from typing import Any

from django.apps import apps as global_apps
from django.apps.registry import Apps

# National lines as their operators publish them: (country, name, contact, url, languages).
CRISIS_LINES: list[tuple[str, str, str, str, list[str]]] = [
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


def crisis_lines_write(*, apps: Apps, using: str = "default") -> None:
    """Create each seeded line that is missing (the data migration's step)."""
    CrisisLine = apps.get_model("evaluations", "CrisisLine")
    for country, name, contact, url, languages in CRISIS_LINES:
        CrisisLine.objects.using(using).get_or_create(
            country=country,
            name=name,
            defaults={"contact": contact, "url": url, "languages": languages},
        )


def crisis_lines_seed(
    sender: object = None, *, apps: Apps | None = None, using: str = "default", **kwargs: Any
) -> None:
    """Seed the lines into a database that has none. Connected to post_migrate."""
    apps = apps or global_apps
    try:
        CrisisLine = apps.get_model("evaluations", "CrisisLine")
    except LookupError:  # migrating backwards past the table
        return
    if CrisisLine.objects.using(using).exists():
        return
    crisis_lines_write(apps=apps, using=using)
