"""Styled error pages, the favicon and the API documentation's way back to the site."""

import html

import pytest
from django.urls import reverse
from django.utils import translation

pytestmark = pytest.mark.django_db


def test_a_missing_page_is_styled_and_says_what_to_do(client):
    response = client.get("/registry/metrics/IB-M-99999/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'data-testid="error-404"' in page
    assert reverse("metrics_registry:metric_list") in page
    assert "favicon.svg" in page  # the site's own layout
    assert "URLconf" not in page


def test_a_forbidden_page_names_the_account_and_what_it_can_do(client_for, contributor):
    response = client_for(contributor).get(reverse("submissions:candidate-list"))
    assert response.status_code == 403
    page = response.content.decode()
    assert 'data-testid="error-403"' in page
    assert contributor.email in page
    assert "Contributor" in page
    assert reverse("core:dashboard") in page
    assert reverse("contact:form") in page


def test_favicon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("favicon.svg")


def test_the_api_docs_link_back_and_describe_what_the_api_offers(client):
    page = client.get(reverse("api-docs")).content.decode()
    header = page.split('data-testid="api-docs-header"')[1].split("</header>")[0]
    assert f'href="{reverse("core:home")}"' in header
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    description = schema["info"]["description"].lower()
    resources = {path.split("/")[2] for path in schema["paths"]}
    assert {"metrics", "releases", "submissions"} <= resources
    for resource in resources:  # every kind of endpoint is named in the description
        assert resource.rstrip("s") in description, resource


def test_the_error_pages_speak_the_readers_language(client_for, contributor, client, settings):
    missing = client.get("/es/registry/metrics/IB-M-99999/")
    assert missing.status_code == 404
    page = missing.content.decode()
    assert "No hemos encontrado esa página" in page
    assert "We could not find" not in page
    assert "/es/registry/metrics/" in page  # its links stay in Spanish

    with translation.override("es"):
        url = reverse("submissions:candidate-list")
    forbidden = client_for(contributor).get(url)
    assert forbidden.status_code == 403
    page = forbidden.content.decode()
    assert "Esta página no está abierta a su cuenta" in page
    assert "con el rol Colaborador." in page  # the role's name in Spanish too
    assert contributor.email in page

    # Refused before any view: a control character in the address, and an oversized body
    # (refused before the language middleware has run), each in the address's language.
    control = client.get("/es/registry/metrics/", {"q": "a\x07b"})
    assert control.status_code == 400
    body = html.unescape(control.content.decode())
    assert '<html lang="es"' in body
    assert "Petición incorrecta" in body
    assert "El parámetro de consulta 'q' contiene un carácter de control (U+0007" in body
    settings.REQUEST_BODY_MAX_BYTES = 1024 * 1024
    large = client.post(
        "/es/contact/", data="x" * 10, content_type="text/plain", CONTENT_LENGTH=str(2 * 1024**2)
    )
    assert large.status_code == 413
    assert "La petición ocupa más de 1 MB; no se ha guardado nada." in large.content.decode()
    # The API answers in English whatever the reader's language.
    api = client.get("/api/metrics/", {"q": "a\x07b"}, HTTP_ACCEPT_LANGUAGE="es")
    assert api.status_code == 400
    assert api.json()["detail"].startswith("The query parameter 'q' contains a control character")
    large_api = client.post(
        "/api/metrics/", data="x", content_type="text/plain", CONTENT_LENGTH=str(2 * 1024**2)
    )
    assert large_api.json()["detail"] == "The request is larger than 1 MB; nothing was kept."
