"""Reject control characters in the path and the query string before any view or database sees
them; also in form bodies of the API, the account pages and the admin (JSON bodies are checked
by core.api's parser, and the platform's own forms by core.forms so the user's text is kept).
Refuse bodies larger than any form needs before anything reads them."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .caches import CACHE_STORE_ERRORS, cache_failure_log
from .ids import InvalidIdentifier
from .validators import control_character_find

# Forms here are allauth's, the admin's or the API's: checked whole, before they run.
BODY_CHECKED_PREFIXES = ("/api/", "/accounts/", "/admin/")


def is_api_request(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request: HttpRequest, message: str) -> HttpResponse:
    """A 400 saying what was wrong: JSON for the API, a short page elsewhere."""
    if is_api_request(request):
        return JsonResponse({"detail": message}, status=400)
    body = render_to_string("core/bad_request.html", {"message": message})
    return HttpResponseBadRequest(body)


class RequestSizeMiddleware:
    """Refuse a body whose declared length is above ``REQUEST_BODY_MAX_BYTES`` (413), before
    the session, CSRF or any view reads it: nothing of it is spooled to disk."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Runs before the locale middleware: the reply takes the address's language (/es/).
        with translation.override(_language_of_address(request)):
            refused = self._refusal(request)
        return refused or self.get_response(request)

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return bad_request(request, gettext("The request's Content-Length is not a number."))
        limit = settings.REQUEST_BODY_MAX_BYTES
        if length > limit:
            message = gettext("The request is larger than %(megabytes)s MB; nothing was kept.") % {
                "megabytes": limit // (1024 * 1024)
            }
            if is_api_request(request):
                return JsonResponse({"detail": message}, status=413)
            body = render_to_string("core/bad_request.html", {"message": message})
            return HttpResponse(body, status=413)
        return None


def _language_of_address(request: HttpRequest) -> str:
    """The language a reply made before the locale middleware is in: the API's is the site's
    default; a page's, its address prefix's (/es/…), else the default."""
    if is_api_request(request):
        return settings.LANGUAGE_CODE
    return translation.get_language_from_path(request.path_info) or settings.LANGUAGE_CODE


class _FilePartsSkipped(FileUploadHandler):
    """Reads past every file part of a multipart body without storing a byte of it."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        raise SkipFile

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        return None

    def file_complete(self, file_size: int) -> None:
        return None


class ControlCharacterMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = self._problem(request)
        if problem:
            return bad_request(request, problem)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """An id that is not a number (``core.ids``) is the request's fault: 400 with a reason."""
        if isinstance(exception, InvalidIdentifier):
            return bad_request(request, exception.message)
        return None

    def _problem(self, request: HttpRequest) -> str | None:
        if found := control_character_find(request.path):
            return gettext("The address contains a control character (%(found)s).") % {
                "found": found
            }
        for key, values in request.GET.lists():
            for text in (key, *values):
                if found := control_character_find(text):
                    return gettext(
                        "The query parameter %(name)s contains a control character (%(found)s)."
                    ) % {"name": repr(key), "found": found}
        if request.path_info.startswith(BODY_CHECKED_PREFIXES) and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            if not request.user.is_authenticated:
                # Nothing on these paths takes a file from a signed-out visitor: their fields are
                # read here, their file parts skipped rather than spooled to disk.
                request.upload_handlers = [_FilePartsSkipped(request)]
            for key, values in request.POST.lists():
                for text in (key, *values):
                    if found := control_character_find(text):
                        return gettext(
                            "The field %(name)s contains a control character (%(found)s)."
                        ) % {"name": repr(key), "found": found}
        return None


SIGN_IN_PAUSED = _(
    "Signing in and other account actions are paused: the store that counts failed attempts "
    "cannot be reached, and they are not allowed uncounted. Try again in a minute; nothing "
    "was changed."
)
WRITE_PAUSED = _(
    "This action is paused: the store that counts requests cannot be reached. Try again in a "
    "minute; nothing was changed."
)


class RateLimitStoreMiddleware:
    """Fail closed when the rate-limit store (the default cache) cannot be reached.

    allauth counts sign-in, sign-up and reset attempts in the cache on POST only, so reading is
    never affected (and the page cache degrades by itself, ``core.caches``); a request whose
    counting failed is refused with 503 and a reason. A 503 also keeps any half-made session
    from being saved (Django saves sessions only on answers below 500).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, CACHE_STORE_ERRORS):
            return None
        cache_failure_log(f"{request.method} {request.path}", exception)
        message = SIGN_IN_PAUSED if request.path_info.startswith("/accounts/") else WRITE_PAUSED
        response: HttpResponse
        if is_api_request(request):
            response = JsonResponse({"detail": str(message)}, status=503)
        else:
            body = render_to_string("core/unavailable.html", {"message": message})
            response = HttpResponse(body, status=503)
        response["Retry-After"] = "60"
        return response
