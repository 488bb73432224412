from django.conf import settings
from django.http import HttpRequest

from .demo_progress import seed_banner
from .navigation import navigation_for


def navigation(request: HttpRequest) -> dict:
    return {
        "nav": navigation_for(request.user),
        "site_url": settings.SITE_URL,
        "text_max_length": settings.TEXT_FIELD_MAX_LENGTH,
    }


def demo_seed(request: HttpRequest) -> dict:
    """The demo seeding banner of base.html; a callable, so only pages that show it read it."""
    return {"demo_seed": seed_banner}
