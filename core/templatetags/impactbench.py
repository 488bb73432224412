from django import template
from django.utils.safestring import SafeString, mark_safe

from core.sanitize import sanitize_html

register = template.Library()


@register.filter
def user_text(value: str) -> SafeString:
    """Render text a user wrote: harmless formatting kept, everything else escaped, lines kept."""
    cleaned = sanitize_html(str(value or "")).replace("\r\n", "\n").replace("\n", "<br>\n")
    return mark_safe(cleaned)  # noqa: S308 - nh3 output is safe by construction
