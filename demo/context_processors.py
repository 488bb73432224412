from django.http import HttpRequest

from .progress import seed_banner


def demo_seed(request: HttpRequest) -> dict:
    """The demo seeding banner of base.html; a callable, so only pages that show it read it."""
    return {"demo_seed": seed_banner}
