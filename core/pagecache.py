"""Published pages served from the shared cache, with ETags and conditional GET.

What a public page shows changes only when a maintainer designates or withdraws an official
run, a run's summaries are refreshed (after a run completes or ratings arrive), a release is
published or a metric's registry entry is edited. `published_stamp` reads all of that in one
small query, made of the parts each app registers over its own tables (`stamp_part_register`);
it is part of every cache key and ETag, so a change makes the next request render afresh,
with no invalidation step that could be missed. Registry text reached through other tables
(a metric's status history, say) is bounded by `PAGE_CACHE_SECONDS`.

A page names the query parameters it reads (``page_cache_params``); the view sees only those
(``request.GET`` is cut down to them before it runs) and the key holds only those, with the
host and scheme the page's links are built from. A parameter no page reads therefore neither
adds an entry nor skips the cache. The cache is its own alias (``core.caches``), so nothing
written here can push rate-limit state out, and a cache that cannot be reached costs a render,
never the page.

The key holds only values the cache knows (`page_cache_values_register`): each app says which
values of the parameters its pages read exist (ids, keys, the choices a filter offers), read
once per data stamp, and the API's `Accept` header is reduced to the one representation it
renders (JSON). A request with any other value (an id that does not exist, free text, an
`Accept` with parameters) is answered, uncached, so a flood of distinct values adds no entry.

A page missing from the cache may have been rendered ahead, when a release's figures changed
(`core.page_store`, `StoredPage`): read by its key, which holds the stamp like the cache's, so a
stored page is served only while nothing it shows has changed.

Every language has its own entry: the key holds the active language (the URL is the same in
each), and the middleware adds `Vary: Accept-Language` for shared caches.

Only complete, anonymous answers are stored: a response that used the CSRF token, a CSP nonce
or a session with pending messages is rendered for its reader alone. JSON API answers do not
depend on who asks (no authentication on the results API), so they are shared by everyone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Container
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, QueryDict
from django.http.response import HttpResponseBase
from django.template.response import SimpleTemplateResponse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import parse_etags
from django.utils.translation import get_language
from django.views import View

from .caches import page_cache_get, page_cache_set
from .models import StoredPage

PAGE_CACHE_SECONDS = 600
# Browsers and proxies may reuse a page this long before asking again (then a 304 is cheap).
CLIENT_MAX_AGE = 300
KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Content-Language", "Vary")


StampPart = Callable[[], str]

_stamp_parts: dict[str, StampPart] = {}


def stamp_part_register(name: str, part: StampPart) -> None:
    """Add a scalar SQL subquery whose value changes when published data of one app changes.

    Each app registers the parts over its own tables in ``AppConfig.ready``, so the cache knows
    no app: ``part()`` returns a parenthesised ``SELECT`` of one text value.
    """
    _stamp_parts[name] = part


def latest(column: str) -> str:
    """SQL text of a column's latest value as text ('' on an empty table)."""
    return f"COALESCE(CAST(MAX({column}) AS TEXT), '')"


def published_stamp() -> str:
    """A value that changes whenever any published figure or registry entry may have changed."""
    parts = [_stamp_parts[name]() for name in sorted(_stamp_parts)]
    if not parts:
        return "static"
    # One statement of scalar subqueries over small tables (runs, releases, metrics).
    sql = "SELECT " + ", ".join(parts)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return hashlib.blake2b("|".join(map(str, row)).encode(), digest_size=8).hexdigest()


ValueSource = Callable[[], Container[str]]

_value_sources: dict[str, ValueSource] = {}
# More values than any page's filters take at once is not a reader's request.
MOST_VALUES = 8


def page_cache_values_register(name: str, source: ValueSource) -> None:
    """Say which values of the query parameter `name` a page may be cached under.

    ``source()`` returns the known values (a set of strings, or any container); it is read once
    per data stamp, so it may query. A parameter nobody registers is never cached (free text)."""
    _value_sources[name] = source


class _CanonicalPageNumbers:
    """1, 2, 3…: not 01 or +1, which render the same page under another key."""

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,5}", value) is not None


page_cache_values_register("page", _CanonicalPageNumbers)


@lru_cache(maxsize=64)
def _known_values(source: ValueSource, stamp: str) -> Container[str]:
    # Keyed by the stamp: anything published changing gives a new stamp and a fresh read. By
    # source, so parameters sharing one (model, target, a, b…) read it once.
    return source()


def page_cache_values_known(request: HttpRequest, stamp: str) -> bool:
    """Whether every value of the (already cut down) query is one the cache knows."""
    if sum(len(request.GET.getlist(name)) for name in request.GET) > MOST_VALUES:
        return False
    for name in request.GET:
        if name not in _value_sources:
            return False
        known = _known_values(_value_sources[name], stamp)
        # An empty value is one value (the filter's "any"), as bounded as a known one.
        if not all(value == "" or value in known for value in request.GET.getlist(name)):
            return False
    return True


# The media ranges for which the API's one renderer (JSON) answers the same bytes.
JSON_RANGES = frozenset({"application/json", "application/*", "*/*"})


def page_representation(request: HttpRequest, name: str) -> str | None:
    """The representation the key holds: "" for HTML pages, "json" for an API answer whose
    `Accept` the JSON renderer answers unchanged, None for any other (answered uncached:
    parameters such as ``indent=`` or ``v=`` change the bytes or name nothing we render)."""
    if not name.startswith("api"):
        return ""
    accept = request.headers.get("Accept", "").strip()
    if not accept:
        return "json"
    ranges = []
    for media_range in accept.split(","):
        media, *params = (part.strip().lower() for part in media_range.split(";"))
        if any(not param.startswith("q=") for param in params):
            return None
        ranges.append(media)
    return "json" if JSON_RANGES.intersection(ranges) else None


# Set in the WSGI environ of a render by `core.page_store` (no HTTP header can set it): the
# page is rendered as a signed-out reader's, whatever is cached or stored.
PAGE_STORE_RENDER = "impactbench.page_store"


def stored_page_get(key: str) -> dict[str, Any] | None:
    """A page rendered ahead under this key (content and headers), or None."""
    row = StoredPage.objects.filter(key=key).values_list("content", "headers").first()
    return None if row is None else {"content": bytes(row[0]), "headers": row[1]}


def _anonymous_without_messages(request: HttpRequest) -> bool:
    if request.user.is_authenticated:
        return False
    if request.COOKIES.get(getattr(settings, "MESSAGE_COOKIE_NAME", "messages")):
        return False
    session = getattr(request, "session", None)
    return not (session is not None and session.session_key and "_messages" in session)


def known_params_keep(request: HttpRequest, known: tuple[str, ...]) -> None:
    """Cut the query down to the parameters a page reads, so what the view renders and what
    the cache key holds cannot differ."""
    query = urlencode([(name, value) for name in known for value in request.GET.getlist(name)])
    request.GET = QueryDict(query, encoding="utf-8")
    # Links built from the full path (DRF's next and previous pages) must not carry them either.
    request.META["QUERY_STRING"] = query


def page_key(request: HttpRequest, name: str, stamp: str) -> str:
    """Cache key of one page: the view, the data stamp, scheme and host (links are absolute
    in places), the path and its sorted query (already cut down to the page's parameters),
    and the language the page is rendered in (the same URL serves every language)."""
    query = sorted((k, v) for k in request.GET for v in request.GET.getlist(k))
    accept = page_representation(request, name) or ""
    htmx = request.headers.get("HX-Request", "")
    origin = f"{request.scheme}://{request.get_host()}"
    # Set by LocaleMiddleware from the language cookie or Accept-Language, one of LANGUAGES:
    # a bounded value, so it adds at most one entry per language.
    language = get_language()
    raw = f"{origin}|{request.path}?{query}|{accept}|{htmx}|{language}"
    digest = hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()
    return f"page:{name}:{stamp}:{digest}"


def _storable(request: HttpRequest, response: HttpResponse) -> bool:
    if response.status_code != 200 or response.streaming:
        return False
    if request.META.get("CSRF_COOKIE_NEEDS_UPDATE") or response.cookies:
        return False  # the page carries this reader's token or sets a cookie
    return b'nonce="' not in response.content


class PublishedPageCacheMixin(View):
    """Serve a public page (or API answer) from the shared cache; answer 304 to a fresh ETag.

    ``page_cache_name`` names the page in keys; ``page_cache_params`` lists the query
    parameters the page reads (every other one is dropped before the view runs);
    ``page_cache_anonymous_only`` (True for HTML pages, whose navigation is the reader's)
    limits caching to signed-out readers.
    """

    page_cache_name = ""
    page_cache_params: tuple[str, ...] = ()
    page_cache_anonymous_only = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD"):
            return super().dispatch(request, *args, **kwargs)
        known_params_keep(request, self.page_cache_params)
        # A signed-in reader's HTML page (its navigation) is theirs alone; the API renders
        # JSON only (no browsable pages), the same for everyone.
        if self.page_cache_anonymous_only and not _anonymous_without_messages(request):
            return super().dispatch(request, *args, **kwargs)
        name = self.page_cache_name or type(self).__name__
        stamp = published_stamp()
        if page_representation(request, name) is None or not page_cache_values_known(
            request, stamp
        ):
            return super().dispatch(request, *args, **kwargs)  # answered, never stored
        key = page_key(request, name, stamp)
        etag = '"' + hashlib.blake2b(key.encode(), digest_size=12).hexdigest() + '"'
        storing = bool(request.META.get(PAGE_STORE_RENDER))
        if not storing:
            if etag in parse_etags(request.headers.get("If-None-Match", "")):
                return self._finish(HttpResponseNotModified(), etag)
            # Else rendered ahead for the release (`core.page_store`): one indexed read, as
            # cheap as the cache's, so it is not copied into the cache.
            hit = page_cache_get(key) or stored_page_get(key)
            if hit is not None:
                stored = HttpResponse(hit["content"], status=200)
                for header, value in hit["headers"].items():
                    stored[header] = value
                return self._finish(stored, etag)
        response = super().dispatch(request, *args, **kwargs)
        if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
            response.render()  # pages and DRF's answers are rendered lazily
        if not isinstance(response, HttpResponse) or not _storable(request, response):
            return response  # a streamed answer has no content to store
        headers = {h: response[h] for h in KEPT_HEADERS if h in response}
        page_cache_set(key, {"content": response.content, "headers": headers}, PAGE_CACHE_SECONDS)
        if storing:
            response.stored_page = (key, headers)  # type: ignore[attr-defined]  # for page_store
        return self._finish(response, etag)

    def _finish(self, response: HttpResponseBase, etag: str) -> HttpResponseBase:
        response["ETag"] = etag
        patch_cache_control(response, public=True, max_age=CLIENT_MAX_AGE)
        if self.page_cache_anonymous_only:
            patch_vary_headers(response, ("Cookie",))
        return response
