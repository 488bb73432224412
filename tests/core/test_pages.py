import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_home_page_shows_the_three_areas(client):
    response = client.get(reverse("core:home"))
    assert response.status_code == 200
    page = response.content.decode()
    for name in ("Psychological", "Physical", "Social", "Learning &amp; Skill Development"):
        assert name in page


def test_health_reports_the_database(client):
    data = client.get(reverse("core:health")).json()
    assert data["status"] == "ok"
    assert data["database"] in {"sqlite", "postgresql"}


def test_api_docs_are_served_without_cdn(client):
    page = client.get(reverse("api-docs")).content.decode()
    assert "swagger" in page.lower()
    assert "cdn.jsdelivr" not in page
    assert "unpkg" not in page
