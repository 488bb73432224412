"""Template helpers for showing model output honestly.

{% load llm_tags %}
{% offline_badge %}                 always shows the "offline demo model" badge
{% offline_badge configuration %}   only when the configuration (or result, call) is offline
"""

from django import template
from django.utils.translation import gettext

from llm.offline import OFFLINE_LABEL

register = template.Library()


@register.inclusion_tag("llm/_offline_badge.html")
def offline_badge(subject: object = True) -> dict:
    """`subject` may be anything with `is_offline` (configuration, result, call) or a bool."""
    show = getattr(subject, "is_offline", subject)
    return {"show": bool(show), "label": gettext(OFFLINE_LABEL)}


@register.simple_tag
def offline_label() -> str:
    return gettext(OFFLINE_LABEL)
