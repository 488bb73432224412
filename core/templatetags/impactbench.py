from collections.abc import Iterable, Mapping

from django import template
from django.utils.safestring import SafeString, mark_safe

from core.languages import language_display_name, languages_pooled_note
from core.sanitize import sanitize_html

register = template.Library()


@register.filter
def user_text(value: str) -> SafeString:
    """Render text a user wrote: harmless formatting kept, everything else escaped, lines kept."""
    cleaned = sanitize_html(str(value or "")).replace("\r\n", "\n").replace("\n", "<br>\n")
    return mark_safe(cleaned)  # noqa: S308 - nh3 output is safe by construction


# Persona keys written by the scenario writer, shown to people.
PERSONA_LABELS = {
    "name": "Name",
    "age": "Age",
    "gender": "Gender",
    "background": "Background",
    "first_language": "First language",
    "living_situation": "Living situation",
    "dialect": "Dialect or register",
}


@register.filter
def persona_label(key: str) -> str:
    """`living_situation` → "Living situation": a persona key as a person would write it."""
    key = str(key or "")
    if key in PERSONA_LABELS:
        return PERSONA_LABELS[key]
    words = key.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else key


@register.filter
def language_name(code: str) -> str:
    """`en` → "English", `pt-br` → "Brazilian Portuguese"; an unknown code is shown as given."""
    return language_display_name(code)


@register.filter
def languages_pooled(rows: Iterable[Mapping[str, str]] | None) -> str:
    """Per-language rows (dicts with a "language" tag) → "pooled across English and Spanish
    items", the words a pooled figure carries."""
    return languages_pooled_note(row["language"] for row in rows or ())
