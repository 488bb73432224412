"""Language-prefixed page URLs that leave every existing link where it was.

A page has two addresses: its plain one (`/metrics/x/`), in the language the reader chose (the
footer's switcher, kept in the language cookie) or their browser asks for, as before prefixes
existed; and one per other language (`/es/metrics/x/`), always in that language — the address
to share, bookmark or cite when the language matters. Links on a page keep the page's language:
`reverse()` gives the prefixed address on a Spanish page and the plain one on an English page.

Django's own `i18n_patterns(prefix_default_language=False)` would make every plain address
English whatever the reader chose; so the prefix pattern here also matches a plain path in any
language, and the middleware takes the language from the path first, then the reader's choice.
"""

from django.conf import settings
from django.http import HttpRequest
from django.middleware.locale import LocaleMiddleware
from django.urls import URLPattern, URLResolver, translate_url
from django.urls.resolvers import LocalePrefixPattern
from django.utils import translation


class OptionalLocalePrefixPattern(LocalePrefixPattern):
    """The active language's prefix, or none: `/es/x/` and `/x/` both reach page x."""

    def match(self, path: str) -> tuple[str, tuple, dict] | None:
        prefix = self.language_prefix
        if prefix and path.startswith(prefix):
            return path.removeprefix(prefix), (), {}
        if translation.get_language_from_path("/" + path) is None:
            return path, (), {}
        return None  # another language's prefix: resolved once that language is active


def locale_patterns(*urls: URLPattern | URLResolver) -> list[URLPattern | URLResolver]:
    """`urls` reachable plainly and under every other language's prefix."""
    if not settings.USE_I18N:
        return list(urls)
    return [URLResolver(OptionalLocalePrefixPattern(prefix_default_language=False), list(urls))]


# Addresses for machines, which have one language-free form: a payload's links are the plain
# addresses whatever the caller's Accept-Language or cookie, so a stored link never changes.
LANGUAGE_FREE_PREFIXES = ("/api/",)
# The one page for people under /api/: the API's documentation reads in the reader's language
# (its header and links; the schema and the API's answers stay in LANGUAGE_CODE).
READ_IN_READERS_LANGUAGE = ("/api/docs/",)


class PathFirstLocaleMiddleware(LocaleMiddleware):
    """The language of a request: its URL's prefix, else the reader's choice (cookie), else
    their browser's Accept-Language, else LANGUAGE_CODE (Django's order, minus the rule that
    a plain URL under language patterns is always in LANGUAGE_CODE). The API is always in
    LANGUAGE_CODE (`LANGUAGE_FREE_PREFIXES`)."""

    def process_request(self, request: HttpRequest) -> None:
        if (
            request.path_info.startswith(LANGUAGE_FREE_PREFIXES)
            and request.path_info not in READ_IN_READERS_LANGUAGE
        ):
            language = settings.LANGUAGE_CODE
        else:
            language = translation.get_language_from_request(request, check_path=True)
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()


def alternate_paths(path: str) -> dict[str, str]:
    """The address of the page at `path` in each of the site's languages (hreflang links):
    the plain address for LANGUAGE_CODE, the prefixed one for the others."""
    return {code: translate_url(path, code) for code, _name in settings.LANGUAGES}
