import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from metrics_registry.models import Metric, Release
from metrics_registry.selectors import metric_current_version
from tests.metrics_registry.factories import ROLES, MetricFactory, metric_version_bump
from tests.metrics_registry.test_imports import BAD_CSV, GOOD_CSV

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_role(request, client):
    """A client for a role name; `anonymous` is the plain client."""

    def login(role: str):
        if role != "anonymous":
            client.force_login(request.getfixturevalue(role))
        return client

    return login


@pytest.mark.parametrize("role", ROLES)
def test_metric_list_and_detail_are_public(role, as_role, catalog):
    client = as_role(role)
    page = client.get(reverse("metrics_registry:metric_list")).content.decode()
    assert "Uses pet names" in page
    assert "Recommends professional support" in page
    sees_drafts = role in {"researcher", "maintainer"}
    assert ("Secret draft metric" in page) == sees_drafts
    detail = client.get(reverse("metrics_registry:metric_detail", args=[catalog["support"].key]))
    assert detail.status_code == 200
    assert "Dr. Ada Example" in detail.content.decode()
    draft = client.get(
        reverse("metrics_registry:metric_detail", args=[catalog["draft_metric"].key])
    )
    assert draft.status_code == (200 if sees_drafts else 404)


def test_metric_list_filters_and_paginates(client, catalog):
    url = reverse("metrics_registry:metric_list")
    page = client.get(url, {"polarity": "negative"}).content.decode()
    assert "Uses pet names" in page
    assert "Recommends professional support" not in page
    page = client.get(url, {"area": "psychological", "q": "distress"}).content.decode()
    assert "Recommends professional support" in page
    assert "Uses pet names" not in page
    page = client.get(url, {"benchmark": "companion-harms"}).content.decode()
    assert "Uses pet names" in page
    assert "Recommends professional support" not in page
    for _ in range(30):
        MetricFactory()
    second = client.get(url, {"page": 2})
    assert second.status_code == 200
    assert "Page 2 of 2" in second.content.decode()


def test_metric_detail_shows_version_and_status_history(client, catalog):
    metric = catalog["pet_names"]
    metric_version_bump(metric, name="Uses pet names or endearments", change_note="Broader name.")
    page = client.get(reverse("metrics_registry:metric_detail", args=[metric.key])).content.decode()
    assert "Uses pet names or endearments" in page
    assert "Broader name." in page
    assert "Companion harms" in page
    assert "Validated" in page


def test_user_text_is_escaped(client):
    metric = MetricFactory(name="<script>alert(1)</script>", status="validated")
    page = client.get(reverse("metrics_registry:metric_detail", args=[metric.key])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page


@pytest.mark.parametrize("role", ROLES)
def test_drafts_are_visible_to_maintainers_only(role, as_role, catalog):
    client = as_role(role)
    page = client.get(reverse("metrics_registry:release_list")).content.decode()
    assert "1.0.0" in page
    assert ("1.1.0" in page) == (role == "maintainer")
    draft_url = reverse("metrics_registry:release_detail", args=["1.1.0"])
    assert client.get(draft_url).status_code == (200 if role == "maintainer" else 404)
    export = reverse("metrics_registry:release_export", args=["1.1.0", "csv"])
    assert client.get(export).status_code == (200 if role == "maintainer" else 404)


@pytest.mark.parametrize("role", ROLES)
def test_release_drafting_pages_are_for_maintainers(role, as_role, catalog):
    client = as_role(role)
    urls = [
        reverse("metrics_registry:release_create"),
        reverse("metrics_registry:release_edit", args=["1.1.0"]),
        reverse("metrics_registry:release_publish", args=["1.1.0"]),
    ]
    for url in urls:
        status = client.get(url).status_code
        if role == "maintainer":
            assert status == 200
        elif role == "anonymous":
            assert status == 302
        else:
            assert status in (403, 404)


def test_release_detail_shows_changelog_and_export_links(client, catalog):
    page = client.get(reverse("metrics_registry:release_detail", args=["1.0.0"])).content.decode()
    assert "first release" in page
    assert "2 added" in page
    assert reverse("metrics_registry:release_export", args=["1.0.0", "csv"]) in page


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [("json", "application/json"), ("jsonl", "application/jsonl"), ("csv", "text/csv")],
)
def test_exports_download_with_versioned_filenames(client, catalog, fmt, content_type):
    response = client.get(reverse("metrics_registry:release_export", args=["1.0.0", fmt]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert response["Content-Disposition"] == f'attachment; filename="impactbench-1.0.0.{fmt}"'
    body = b"".join(response.streaming_content) if response.streaming else response.content
    text = body.decode()
    if fmt == "json":
        assert len(json.loads(text)["metrics"]) == 2
    elif fmt == "jsonl":
        assert len([json.loads(line) for line in text.splitlines()]) == 2
    else:
        assert len(list(csv.DictReader(io.StringIO(text)))) == 2
    assert (
        client.get(reverse("metrics_registry:release_export", args=["1.0.0", "xml"])).status_code
        == 404
    )


def test_maintainer_drafts_fills_and_publishes_a_release(client_for, maintainer, catalog):
    client = client_for(maintainer)
    response = client.post(
        reverse("metrics_registry:release_create"),
        {"version": "2.0.0", "title": "Second edition", "notes": "More metrics."},
    )
    assert response.status_code == 302
    edit = reverse("metrics_registry:release_edit", args=["2.0.0"])
    client.post(edit, {"action": "add_validated"})
    release = Release.objects.get(version="2.0.0")
    assert release.items.count() == 2
    extra = metric_current_version(catalog["draft_metric"])
    client.post(edit, {"action": "add", "version": [extra.pk]})
    assert release.items.count() == 3
    client.post(edit, {"action": "remove", "version": [extra.pk]})
    assert release.items.count() == 2
    publish = reverse("metrics_registry:release_publish", args=["2.0.0"])
    preview = client.get(publish).content.decode()
    assert "Changes since" in preview
    assert "1.0.0" in preview
    client.post(publish, {"confirm": "wrong"})
    release.refresh_from_db()
    assert release.status == "draft"
    response = client.post(publish, {"confirm": "2.0.0"})
    assert response.status_code == 302
    release.refresh_from_db()
    assert release.status == "published"
    assert release.published_by == maintainer
    # Once published, the edit page explains why it cannot change and offers the next draft.
    response = client.get(edit)
    assert response.status_code == 409
    page = response.content.decode()
    assert "Published releases cannot change" in page
    draft_next = reverse("metrics_registry:release_create") + "?after=2.0.0"
    assert f'href="{draft_next}"' in page
    assert "URLconf" not in page
    refused = client.post(edit, {"action": "add", "version": [extra.pk]})
    assert refused.status_code == 409
    assert release.items.count() == 2
    form = client.get(draft_next).content.decode()
    assert 'value="2.1.0"' in form


def test_release_create_form_reports_bad_versions(client_for, maintainer, catalog):
    response = client_for(maintainer).post(
        reverse("metrics_registry:release_create"), {"version": "1.0.0", "title": "Again"}
    )
    assert response.status_code == 200
    assert "already exists" in response.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_import_page_is_for_researchers_and_maintainers(role, as_role):
    status = as_role(role).get(reverse("metrics_registry:metric_import")).status_code
    if role in {"researcher", "maintainer"}:
        assert status == 200
    elif role == "anonymous":
        assert status == 302
    else:
        assert status == 403


def test_import_form_dry_runs_then_imports_the_staged_file(client_for, researcher):
    client = client_for(researcher)
    url = reverse("metrics_registry:metric_import")
    choices = {"benchmark_slug": "companion-harms", "benchmark_name": "Companion harms"}
    upload = SimpleUploadedFile("harms.csv", GOOD_CSV.encode(), content_type="text/csv")
    response = client.post(url, {**choices, "file": upload, "action": "preview"})
    page = response.content.decode()
    assert "Dry run: 3 metrics would be imported" in page
    assert "Import now" in page
    assert 'value="Companion harms"' in page  # choices kept
    assert not Metric.objects.exists()
    staged = response.context["form"]["staged"].value()
    response = client.post(url, {**choices, "staged": staged, "action": "import"})
    assert "Imported 3 metrics" in response.content.decode()
    assert Metric.objects.filter(benchmark__slug="companion-harms").count() == 3
    assert Metric.objects.first().current_version.created_by == researcher


def test_import_form_reports_bad_rows_and_can_skip_them(client_for, maintainer):
    client = client_for(maintainer)
    url = reverse("metrics_registry:metric_import")
    upload = SimpleUploadedFile("bad.csv", BAD_CSV.encode(), content_type="text/csv")
    response = client.post(url, {"benchmark_slug": "harms", "file": upload, "action": "preview"})
    page = response.content.decode()
    assert "Bad rows" in page
    assert "missing criterion" in page
    assert "Import now" not in page
    staged = response.context["form"]["staged"].value()
    response = client.post(
        url,
        {"benchmark_slug": "harms", "staged": staged, "skip_bad_rows": "on", "action": "import"},
    )
    page = response.content.decode()
    assert "Skipped rows" in page
    assert Metric.objects.count() == 1


def test_import_form_needs_a_file_and_rejects_tampered_staging(client_for, maintainer):
    client = client_for(maintainer)
    url = reverse("metrics_registry:metric_import")
    page = client.post(url, {"benchmark_slug": "harms", "action": "preview"}).content.decode()
    assert "Choose a CSV or JSON file" in page
    page = client.post(
        url, {"benchmark_slug": "harms", "staged": "forged", "action": "import"}
    ).content.decode()
    assert "expired" in page
    assert not Metric.objects.exists()


def test_navigation_shows_registry_pages_by_role(client, client_for, researcher, contributor):
    page = client.get(reverse("core:home")).content.decode()
    # Visitors reach metrics through the public results list; the registry list is a workspace page.
    assert reverse("results:metric-list") in page
    assert reverse("metrics_registry:release_list") in page
    assert (
        reverse("metrics_registry:metric_list")
        in client_for(researcher).get(reverse("core:home")).content.decode()
    )
    assert reverse("metrics_registry:metric_import") not in page
    assert (
        reverse("metrics_registry:metric_import")
        not in client_for(contributor).get(reverse("core:home")).content.decode()
    )
    assert (
        reverse("metrics_registry:metric_import")
        in client_for(researcher).get(reverse("core:home")).content.decode()
    )


@pytest.mark.parametrize("role", ROLES)
def test_status_change_from_the_metric_page(role, as_role, catalog):
    client = as_role(role)
    metric = catalog["support"]
    detail = reverse("metrics_registry:metric_detail", args=[metric.key])
    url = reverse("metrics_registry:metric_status_change", args=[metric.key])
    allowed = role in {"researcher", "maintainer"}
    assert (url in client.get(detail).content.decode()) == allowed
    response = client.post(url, {"to_status": "retired", "reason": ""})
    metric.refresh_from_db()
    assert metric.validation_status == "validated"
    if not allowed:
        assert response.status_code in (302, 403)
        return
    assert "why the metric is retired" in client.get(detail).content.decode()
    client.post(url, {"to_status": "contested", "reason": "Raters disagree."})
    metric.refresh_from_db()
    assert metric.validation_status == "contested"
    assert "Raters disagree." in client.get(detail).content.decode()


def test_list_pages_do_not_query_per_row(client, catalog, django_assert_max_num_queries):
    for _ in range(20):
        MetricFactory(subarea_slugs=["law", "culture-identity"])
    with django_assert_max_num_queries(12):
        client.get(reverse("metrics_registry:metric_list"))
    with django_assert_max_num_queries(20):
        client.get(reverse("metrics_registry:release_detail", args=["1.0.0"]))
    with django_assert_max_num_queries(12):
        client.get("/api/metrics/")
