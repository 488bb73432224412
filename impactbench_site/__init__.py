"""The project package: settings, root URLs, the Celery app and the WSGI/ASGI entry points.

It sits on the top floor with ``demo`` and may import any app; no app imports it.
"""

from .celery import app as celery_app

__all__ = ("celery_app",)
