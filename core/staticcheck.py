"""The web server refuses to start when its static files were never collected.

With a manifest storage (production), every `{% static %}` looks the file up in the manifest
that `collectstatic` writes; without it, every page is a 500. Saying so at start-up is kinder
than a site whose health checks pass while no page renders.
"""

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin
from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import storages


def static_manifest_require() -> None:
    """Raise ImproperlyConfigured, saying what to run, when the manifest is missing."""
    storage = storages["staticfiles"]
    if not isinstance(storage, ManifestFilesMixin):
        return
    if not storage.exists(storage.manifest_name):
        raise ImproperlyConfigured(
            f"Static files have not been collected: {storage.manifest_name} is missing from "
            f"STATIC_ROOT ({settings.STATIC_ROOT}). Run `python manage.py collectstatic "
            "--noinput` before starting the web server."
        )
