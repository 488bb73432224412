"""Absolute links for emails, built from SITE_URL (which `make demo PORT=…` sets)."""

from django.conf import settings
from django.urls import reverse


def site_url(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def site_reverse(viewname: str, **kwargs: object) -> str:
    return site_url(reverse(viewname, kwargs=kwargs or None))
