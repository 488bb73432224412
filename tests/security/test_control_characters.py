"""NUL and other C0 control characters are refused at every edge with a 400 and a reason.

Run on SQLite and on PostgreSQL (which raises DataError for NUL in text if it ever gets there).
"""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.exceptions import ParseError

from core.jsonsafe import json_depth
from core.parsers import CheckedJSONParser
from metrics_registry.models import Metric

pytestmark = pytest.mark.django_db

HEADER = "name,criterion,polarity,subareas,label_category"


@pytest.mark.parametrize(
    "url",
    [
        "/api/metrics/?search=%00",
        "/api/metrics/?search=a%1Bb",
        "/api/metrics/%00/",
        "/api/releases/%00/",
        "/api/submissions/?status=%07",
    ],
)
def test_api_urls_with_control_characters_are_json_400s(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "control character" in response.json()["detail"]


@pytest.mark.parametrize(
    "url",
    [
        "/registry/metrics/IB-M-%00/",
        "/registry/releases/%00/",
        "/registry/metrics/?q=%00",
        "/registry/metrics/?%00=1",
        "/accounts/login/?next=%00",
    ],
)
def test_page_urls_with_control_characters_are_400_pages(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "control character" in response.content.decode()


def test_tab_and_newline_in_a_query_are_not_control_characters(client, catalog):
    assert client.get("/api/metrics/?search=pet%09names").status_code == 200
    assert client.get("/registry/metrics/?q=pet%0Anames").status_code == 200


def test_a_nul_in_a_sign_in_form_is_a_400_not_a_database_error(client):
    response = client.post(reverse("account_login"), {"login": "a\x00@x.org", "password": "x"})
    assert response.status_code == 400


def _parse(body: str):
    return CheckedJSONParser().parse(io.BytesIO(body.encode()), "application/json", {})


def test_a_nul_in_an_api_json_body_is_refused():
    # The API is read-only today; its JSON parser is the edge for any body it accepts.
    with pytest.raises(ParseError, match="control character"):
        _parse('{"title": "ok\\u0000", "behavior": "x"}')
    assert _parse('{"title": "tab\\tand\\nnewline"}') == {"title": "tab\tand\nnewline"}


def test_deeply_nested_json_is_a_parse_error_not_a_recursion_error():
    with pytest.raises(ParseError, match="nested 100000 levels"):
        _parse("[" * 100_000 + "]" * 100_000)


def test_the_api_refuses_form_bodies_with_control_characters(client_for, contributor):
    response = client_for(contributor).post("/api/submissions/", {"title": "a\x00"})
    assert response.status_code == 400
    assert "control character" in response.json()["detail"]


def test_json_depth_ignores_brackets_inside_strings():
    assert json_depth('{"a": "[[[[", "b": [1, {"c": "\\"]]"}]}') == 3


def test_csv_cells_with_nul_in_the_web_import_are_reported_not_stored(client_for, researcher):
    csv_text = "\n".join(
        [
            HEADER,
            "Pet\x00 names,Uses pet names.,negative,social-relationships,emotional-dependence",
        ]
    )
    response = client_for(researcher).post(
        reverse("metrics_registry:metric_import"),
        {
            "file": SimpleUploadedFile("harms.csv", csv_text.encode()),
            "benchmark_slug": "companion-harms",
            "action": "import",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "control character (U+0000" in page
    assert not Metric.objects.exists()


def test_platform_forms_refuse_control_characters_and_keep_the_text(client_for, contributor):
    response = client_for(contributor).post(
        reverse("submissions:create"),
        {"title": "A title", "behavior": "Keeps\x1b this text", "save": "1"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "control character (U+001B" in page
    assert "Keeps" in page
