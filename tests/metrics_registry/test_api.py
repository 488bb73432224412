import json

import pytest

from metrics_registry.models import Release
from tests.metrics_registry.factories import (
    ROLES,
    MetricFactory,
    metric_version_bump,
    release_with,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_as(request, api_client):
    def login(role: str):
        if role != "anonymous":
            api_client.force_authenticate(request.getfixturevalue(role))
        return api_client

    return login


@pytest.mark.parametrize("role", ROLES)
def test_release_list_hides_drafts_from_everyone_but_maintainers(role, api_as, catalog):
    client = api_as(role)
    data = client.get("/api/releases/").json()
    versions = [release["version"] for release in data["results"]]
    assert versions == (["1.1.0", "1.0.0"] if role == "maintainer" else ["1.0.0"])
    assert data["results"][-1]["metric_count"] == 2
    draft = client.get("/api/releases/1.1.0/")
    assert draft.status_code == (200 if role == "maintainer" else 404)
    if role != "maintainer":
        assert draft.json() == {"detail": "No published release 1.1.0."}


def test_release_detail_has_items_and_changelog(api_client, catalog):
    data = api_client.get("/api/releases/1.0.0/").json()
    assert data["status"] == "published"
    keys = [item["key"] for item in data["items"]]
    assert keys == sorted([catalog["pet_names"].key, catalog["support"].key])
    item = next(i for i in data["items"] if i["key"] == catalog["pet_names"].key)
    assert item["version"]["number"] == 1
    assert item["version"]["polarity"] == "negative"
    assert item["version"]["subareas"][0] == {
        "slug": "social-relationships",
        "name": "Social Relationships",
        "area": "social",
    }
    assert item["version"]["label_category"]["slug"] == "emotional-dependence"
    assert data["changelog"]["previous"] is None
    assert len(data["changelog"]["added"]) == 2


@pytest.mark.parametrize("role", ROLES)
def test_metric_api_is_public_and_hides_draft_metrics(role, api_as, catalog):
    client = api_as(role)
    keys = [m["key"] for m in client.get("/api/metrics/").json()["results"]]
    sees_drafts = role in {"researcher", "maintainer"}
    assert (catalog["draft_metric"].key in keys) == sees_drafts
    assert catalog["support"].key in keys
    detail = client.get(f"/api/metrics/{catalog['draft_metric'].key}/")
    assert detail.status_code == (200 if sees_drafts else 404)


def test_metric_api_filters_and_includes_current_version(api_client, catalog):
    data = api_client.get("/api/metrics/", {"polarity": "negative"}).json()
    assert [m["key"] for m in data["results"]] == [catalog["pet_names"].key]
    metric = data["results"][0]
    assert metric["current_version"]["name"] == "Uses pet names"
    assert metric["benchmark"]["slug"] == "companion-harms"
    data = api_client.get("/api/metrics/", {"area": "psychological", "search": "distress"}).json()
    assert [m["key"] for m in data["results"]] == [catalog["support"].key]
    detail = api_client.get(f"/api/metrics/{catalog['support'].key}/").json()
    assert detail["credit_name"] == "Dr. Ada Example"
    assert [v["number"] for v in detail["versions"]] == [1]
    missing = api_client.get("/api/metrics/IB-M-99999/")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "No metric with key IB-M-99999."}


@pytest.mark.parametrize("role", ROLES)
def test_api_refuses_writes_with_a_json_reason(role, api_as, catalog):
    client = api_as(role)
    for url in ("/api/releases/", "/api/releases/1.0.0/", "/api/metrics/"):
        response = client.post(url, {}, format="json")
        assert response.status_code in (401, 403, 405)
        assert "detail" in response.json()


def test_schema_documents_the_registry_api(client):
    schema = client.get("/api/schema/").content.decode()
    assert "/api/releases/{version}/" in schema
    assert "/api/metrics/{key}/" in schema


def test_release_items_render_as_their_serializer_across_versions_and_releases(api_client):
    """The API builds items from flat rows; they read exactly as ReleaseItemOutput renders the
    items as model objects, each version with its own subareas in the taxonomy's order."""
    from metrics_registry.api.serializers import ReleaseItemOutput
    from metrics_registry.selectors import release_items

    # Subareas given out of the taxonomy's order, across areas; one metric in two versions.
    spread = MetricFactory(subarea_slugs=["bias-discrimination", "law", "agency-purpose"])
    single = MetricFactory(subarea_slugs=["physical-safety"])
    other = MetricFactory(subarea_slugs=["creativity", "mental-emotional-health"])
    release_with("1.0.0", [spread, single, other], publish=True)
    metric_version_bump(spread, subarea_slugs=["culture-identity", "physical-health"])
    metric_version_bump(single, label_category_slug="sycophancy", polarity="negative")
    release = release_with("1.1.0", [spread, single, MetricFactory()], publish=True)
    for version in ("1.0.0", "1.1.0"):
        published = Release.objects.get(version=version)
        body = api_client.get(f"/api/releases/{version}/").json()
        expected = ReleaseItemOutput(release_items(published), many=True).data
        assert body["items"] == json.loads(json.dumps(expected)), version
    items = api_client.get(f"/api/releases/{release.version}/").json()["items"]
    by_key = {item["key"]: item["version"] for item in items}
    assert [s["slug"] for s in by_key[spread.key]["subareas"]] == [
        "physical-health",
        "culture-identity",
    ]
    assert by_key[single.key]["label_category"]["slug"] == "sycophancy"
