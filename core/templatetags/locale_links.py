"""`{% language_alternates %}`: the page's address in each of the site's languages."""

from django import template
from django.conf import settings
from django.utils.html import format_html, format_html_join

from core.locale_urls import alternate_paths

register = template.Library()


@register.simple_tag(takes_context=True)
def language_alternates(context: template.Context) -> str:
    """hreflang links to the page in each language: search engines and readers sharing a link
    find the Spanish address of an English page; the plain address stands for any other."""
    request = context.get("request")
    if request is None:
        return ""
    paths = alternate_paths(request.get_full_path())
    site = settings.SITE_URL.rstrip("/")
    links = format_html_join(
        "\n  ",
        '<link rel="alternate" hreflang="{}" href="{}{}">',
        ((code, site, path) for code, path in paths.items()),
    )
    plain = paths.get(settings.LANGUAGE_CODE)
    if plain is None:
        return links
    return format_html(
        '{}\n  <link rel="alternate" hreflang="x-default" href="{}{}">', links, site, plain
    )
