"""Styled error pages, the favicon and the API documentation's way back to the site."""

import pytest
from django.urls import reverse

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
