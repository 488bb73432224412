"""The interface in the reader's language: chosen with the footer's switcher (a cookie) or the
browser's Accept-Language, on the same unprefixed URLs, and cached once per language."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _label_url(run) -> str:
    return reverse("results:label", args=[run.targets.order_by("name").first().pk])


def test_the_page_cache_serves_each_language_its_own_page(client):
    url = _label_url(published_run())
    spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es")
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert '<html lang="es"' in spanish.content.decode()
    # Without the language in the key this would be the Spanish page, cached a moment ago.
    assert '<html lang="en"' in english.content.decode()
    assert spanish["ETag"] != english["ETag"]
    assert "Accept-Language" in english["Vary"]
    assert "Cookie" in english["Vary"]
    # Each is then served from the cache, still in its own language.
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="es").content == spanish.content
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="en").content == english.content


def test_the_switcher_sets_the_language_without_a_csrf_token_and_keeps_the_url():
    client = Client(enforce_csrf_checks=True)  # as a browser: the footer's form has no token
    home = client.get(reverse("core:home")).content.decode()
    assert 'data-testid="language-switcher"' in home
    assert '<label for="language-select">' in home
    assert 'action="/i18n/setlang/"' in home
    answer = client.post(reverse("set_language"), {"language": "es", "next": "/label/"})
    assert answer.status_code == 302
    assert answer["Location"] == "/label/"  # the same permalink, no /es/ prefix
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "es"
    assert '<html lang="es"' in client.get(reverse("core:home")).content.decode()


def test_english_is_the_default_and_an_unknown_language_falls_back_to_it(client):
    assert '<html lang="en"' in client.get(reverse("core:home")).content.decode()
    page = client.get(reverse("core:home"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="en"' in page
