"""Reject control characters in the path and the query string before any view or database sees
them; also in form bodies of the API, the account pages and the admin (JSON bodies are checked
by core.api's parser, and the platform's own forms by core.forms so the user's text is kept)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.template.loader import render_to_string

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


class ControlCharacterMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = self._problem(request)
        if problem:
            return bad_request(request, problem)
        return self.get_response(request)

    def _problem(self, request: HttpRequest) -> str | None:
        if found := control_character_find(request.path):
            return f"The address contains a control character ({found})."
        for key, values in request.GET.lists():
            for text in (key, *values):
                if found := control_character_find(text):
                    return f"The query parameter {key!r} contains a control character ({found})."
        if request.path_info.startswith(BODY_CHECKED_PREFIXES) and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            for key, values in request.POST.lists():
                for text in (key, *values):
                    if found := control_character_find(text):
                        return f"The field {key!r} contains a control character ({found})."
        return None
