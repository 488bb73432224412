"""The database itself refuses changes to published releases and to metric versions."""

import pytest
from django.db import DatabaseError, connection, transaction

from metrics_registry.db_guards import TRIGGER_NAMES, guards_installed
from metrics_registry.models import MetricVersion, Release, ReleaseItem, Subarea
from metrics_registry.selectors import metric_current_version
from tests.metrics_registry.factories import MetricFactory, metric_version_bump, release_with

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def refused(action) -> bool:
    # The savepoint keeps the test's transaction usable on PostgreSQL after the error.
    try:
        with transaction.atomic():
            action()
    except DatabaseError:
        return True
    return False


def test_every_guard_trigger_is_installed():
    assert guards_installed(connection) == set(TRIGGER_NAMES)


@pytest.fixture
def published():
    metric = MetricFactory()
    return release_with("1.0.0", [metric], publish=True)


def test_raw_update_and_delete_of_a_published_release_fail(published):
    rows = Release.objects.filter(pk=published.pk)
    assert refused(lambda: rows.update(title="Rewritten history"))
    assert refused(lambda: rows.update(status="draft"))
    assert refused(lambda: rows.update(notes="x"))
    assert refused(lambda: rows.delete())
    published.refresh_from_db()
    assert published.title == "Release 1.0.0"
    assert published.status == "published"


def test_raw_insert_update_delete_of_items_of_a_published_release_fail(published):
    other = MetricFactory()
    item = published.items.get()
    newer = metric_version_bump(item.metric, name="Newer")
    assert refused(
        lambda: ReleaseItem.objects.create(
            release=published, metric=other, metric_version=metric_current_version(other)
        )
    )
    assert refused(lambda: ReleaseItem.objects.filter(pk=item.pk).update(metric_version=newer))
    assert refused(lambda: ReleaseItem.objects.filter(pk=item.pk).delete())
    assert published.items.count() == 1


def test_moving_an_item_into_a_published_release_fails(published):
    draft = release_with("1.1.0", [MetricFactory()])
    item = draft.items.get()
    assert refused(lambda: ReleaseItem.objects.filter(pk=item.pk).update(release=published))


def test_drafts_stay_editable_at_the_database_level():
    draft = release_with("1.0.0", [MetricFactory()])
    assert not refused(lambda: Release.objects.filter(pk=draft.pk).update(title="Renamed"))
    assert not refused(lambda: draft.items.all().delete())
    assert not refused(lambda: Release.objects.filter(pk=draft.pk).delete())


def test_raw_update_of_version_content_fails_but_users_can_be_detached():
    version = metric_current_version(MetricFactory())
    rows = MetricVersion.objects.filter(pk=version.pk)
    assert refused(lambda: rows.update(criterion="Rewritten"))
    assert refused(lambda: rows.update(number=7))
    assert refused(lambda: rows.update(language="es"))
    # Deleting an account nulls created_by; that must stay possible.
    assert not refused(lambda: rows.update(created_by=None))


def test_subareas_of_a_published_version_cannot_change(published):
    version = published.items.get().metric_version
    assert refused(lambda: version.subareas.add(Subarea.objects.get(slug="law")))
    assert refused(lambda: version.subareas.clear())
    unpublished = metric_current_version(MetricFactory())
    assert not refused(lambda: unpublished.subareas.add(Subarea.objects.get(slug="law")))
