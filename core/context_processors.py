from django.conf import settings
from django.http import HttpRequest

from .navigation import navigation_for


def navigation(request: HttpRequest) -> dict:
    return {
        "nav": navigation_for(request.user),
        "site_url": settings.SITE_URL,
        "text_max_length": settings.TEXT_FIELD_MAX_LENGTH,
    }
