from collections.abc import Iterable, Mapping

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from core.languages import language_display_name, languages_pooled_note, text_fallback_note
from core.sanitize import sanitize_html

register = template.Library()


@register.filter
def user_text(value: str) -> SafeString:
    """Render text a user wrote: harmless formatting kept, everything else escaped, lines kept."""
    cleaned = sanitize_html(str(value or "")).replace("\r\n", "\n").replace("\n", "<br>\n")
    return mark_safe(cleaned)  # noqa: S308 - nh3 output is safe by construction


# Persona keys written by the scenario writer, shown to people.
PERSONA_LABELS = {
    "name": _("Name"),
    "age": _("Age"),
    "gender": _("Gender"),
    "background": _("Background"),
    "first_language": _("First language"),
    "living_situation": _("Living situation"),
    "dialect": _("Dialect or register"),
}


@register.filter
def persona_label(key: str) -> str:
    """`living_situation` → "Living situation": a persona key as a person would write it."""
    key = str(key or "")
    if key in PERSONA_LABELS:
        return str(PERSONA_LABELS[key])
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


@register.filter
def text_lang(shown: object) -> SafeString:
    """` lang="en"` on an element holding expert content shown in another language than the
    page's (a `ShownText` whose `is_fallback` is set), so screen readers pronounce it right;
    nothing otherwise."""
    if not getattr(shown, "is_fallback", False):
        return SafeString("")
    return format_html(' lang="{}"', getattr(shown, "language", ""))


@register.simple_tag
def fallback_note(*shown_texts: object) -> str:
    """The note under expert content shown in another language ("Shown in English: no
    Spanish version yet."), once for all the texts given (lists of them too); empty when each
    is in the reader's language."""
    flat: list[object] = []
    for item in shown_texts:
        if isinstance(item, Mapping):
            flat.extend(item.values())
        elif isinstance(item, Iterable) and not isinstance(item, str):
            flat.extend(item)
        else:
            flat.append(item)
    # Rows that carry their shown text as `.shown` (a label category's metrics) count too.
    flat = [getattr(item, "shown", item) for item in flat]
    fallen = [getattr(s, "language", "") for s in flat if getattr(s, "is_fallback", False)]
    return text_fallback_note(fallen) if fallen else ""


@register.filter
def fallback_languages_note(languages: Iterable[str] | None) -> str:
    """`fallback_note` from the tags of what was shown in another language (a list page that
    kept only them); empty when there are none."""
    tags = [tag for tag in languages or () if tag]
    return text_fallback_note(tags) if tags else ""


@register.filter
def shown_for(shown_texts: Mapping[object, object] | None, obj: object) -> object | None:
    """The entry of a `{pk: shown text}` mapping for `obj` (a version, or its pk)."""
    return (shown_texts or {}).get(getattr(obj, "pk", obj))
