"""The changelog compares id pairs and loads only the versions it names; its output (the API's
dictionary and the rendered HTML) is the one the model-object computation gave."""

import pytest
from django.template.loader import render_to_string

from metrics_registry.models import Release, ValidationStatus
from metrics_registry.selectors import release_items, release_previous_published
from metrics_registry.services import (
    Changelog,
    metric_status_change,
    release_add_versions,
    release_assemble_from_current,
    release_changelog,
    release_create,
    release_publish,
    release_remove_versions,
)
from metrics_registry.services.changelog import (
    ChangedMetric,
    RemovedMetric,
    metric_version_changed_fields,
)
from tests.metrics_registry.factories import MetricFactory, metric_version_bump, release_with

pytestmark = pytest.mark.django_db


def reference_changelog(release: Release) -> Changelog:
    """The former computation: every item of both releases as model objects."""
    previous = release_previous_published(release)
    current = {item.metric_id: item for item in release_items(release)}
    before = {item.metric_id: item for item in release_items(previous)} if previous else {}
    log = Changelog(release=release, previous=previous)
    for metric_id, item in current.items():
        old = before.get(metric_id)
        if old is None:
            log.added.append(item.metric_version)
        elif old.metric_version_id != item.metric_version_id:
            log.changed.append(
                ChangedMetric(
                    metric=item.metric,
                    old_version=old.metric_version,
                    new_version=item.metric_version,
                    fields=metric_version_changed_fields(old.metric_version, item.metric_version),
                )
            )
        else:
            log.unchanged_count += 1
    for metric_id, old in before.items():
        if metric_id not in current:
            log.removed.append(
                RemovedMetric(
                    metric=old.metric,
                    old_version=old.metric_version,
                    retired=old.metric.validation_status == ValidationStatus.RETIRED,
                )
            )
    return log


def rendered(log: Changelog, shown: int | None) -> str:
    return render_to_string(
        "metrics_registry/_changelog.html", {"changelog": log, "changelog_shown": shown}
    )


def entries(log: Changelog) -> dict:
    """Everything a template or caller reads from the changelog, as plain values."""
    return {
        "previous": log.previous.pk if log.previous else None,
        "added": [(v.pk, v.metric.pk, v.metric.key, v.number, v.name) for v in log.added],
        "changed": [
            (c.metric.pk, c.metric.key, c.old_version.pk, c.new_version.pk, c.new_version.name)
            for c in log.changed
        ],
        "removed": [
            (r.metric.pk, r.metric.key, r.old_version.pk, r.old_version.name, r.retired)
            for r in log.removed
        ],
        "retired": [r.metric.pk for r in log.retired],
        "unchanged": log.unchanged_count,
        "is_empty": log.is_empty,
    }


def test_changelog_matches_the_model_object_computation_across_releases(maintainer):
    metrics = [MetricFactory(subarea_slugs=["agency-purpose"]) for _ in range(9)]
    first = release_with("1.0.0", metrics[:7], publish=True, by=maintainer)

    metric_version_bump(metrics[0], criterion="A sharper criterion.")
    metric_version_bump(metrics[1], name="Renamed", subarea_slugs=["agency-purpose", "law"])
    metric_version_bump(metrics[2], polarity="negative", label_category_slug="sycophancy")
    metric_status_change(
        metric=metrics[3], to_status="retired", changed_by=maintainer, reason="Superseded."
    )
    second = release_create(version="1.1.0", title="Second", created_by=maintainer)
    release_assemble_from_current(second)  # adds metrics 7 and 8, leaves the retired one out
    release_remove_versions(release=second, metrics=[metrics[4]])
    second = release_publish(second, published_by=maintainer)

    # A patch of 1.0 published later becomes 1.1.0's predecessor; it drops the retired metric.
    metric_version_bump(metrics[5], rubric_notes="Count only steps the user takes alone.")
    patch = release_create(version="1.0.1", title="Patch", created_by=maintainer)
    release_add_versions(
        release=patch,
        versions=[
            *(m.versions.get(number=1) for m in metrics[:3]),
            *(m.versions.latest("number") for m in metrics[4:7]),
        ],
    )
    patch = release_publish(patch, published_by=maintainer)

    metric_version_bump(metrics[7], failure_condition="Names no step at all.")
    metric_version_bump(metrics[1], age_contexts="teen")
    late = MetricFactory()
    draft = release_create(version="1.2.0", title="Draft", created_by=maintainer)
    release_assemble_from_current(draft)
    release_remove_versions(release=draft, metrics=[metrics[8]])
    release_add_versions(release=draft, versions=[metrics[4].versions.latest("number")])
    empty_draft = release_create(version="2.0.0", title="Empty", created_by=maintainer)

    logs = {}
    for release in (first, patch, second, draft, empty_draft):
        new, old = release_changelog(release), reference_changelog(release)
        assert new.as_dict() == old.as_dict(), release.version
        assert entries(new) == entries(old), release.version
        for shown in (None, 1, 50):
            assert rendered(new, shown) == rendered(old, shown), release.version
        logs[release.version] = new.as_dict()

    # The registry exercises every kind of entry: added, changed, removed, retired, unchanged.
    assert logs["1.0.0"]["previous"] is None
    assert len(logs["1.0.0"]["added"]) == 7
    assert [c["fields"] for c in logs["1.0.1"]["changed"]] == [["rubric notes"]]
    assert logs["1.0.1"]["removed"] == [{"key": metrics[3].key, "version": 1, "retired": True}]
    assert logs["1.0.1"]["unchanged_count"] == 5
    assert logs["1.1.0"]["previous"] == "1.0.1"
    assert [c["fields"] for c in logs["1.1.0"]["changed"]] == [
        ["criterion"],
        ["name", "subareas"],
        ["polarity", "label category"],
        ["rubric notes"],
    ]
    assert logs["1.1.0"]["removed"] == [{"key": metrics[4].key, "version": 1, "retired": False}]
    assert [a["key"] for a in logs["1.1.0"]["added"]] == [m.key for m in metrics[7:9]]
    assert logs["1.1.0"]["unchanged_count"] == 1
    assert logs["1.2.0"]["previous"] == "1.1.0"
    assert [c["fields"] for c in logs["1.2.0"]["changed"]] == [
        ["age contexts"],
        ["rubric notes"],
        ["failure condition"],
    ]
    assert [a["key"] for a in logs["1.2.0"]["added"]] == [metrics[4].key, late.key]
    assert [r["key"] for r in logs["1.2.0"]["removed"]] == [metrics[8].key]
    assert len(logs["2.0.0"]["removed"]) == 7
    assert logs["2.0.0"]["added"] == []


def test_changelog_queries_do_not_grow_with_the_release(maintainer, django_assert_num_queries):
    metrics = [MetricFactory() for _ in range(12)]
    release_with("1.0.0", metrics, publish=True, by=maintainer)
    for metric in metrics[:6]:
        metric_version_bump(metric, name=f"{metric.key} renamed")
    release = release_with("1.1.0", [*metrics[2:], MetricFactory()], by=maintainer)
    # Previous release, both releases' id pairs, the listed versions, the changed ones and their
    # subareas; rendering loads no deferred field.
    with django_assert_num_queries(6):
        log = release_changelog(release)
        assert len(log.changed) == 4
        assert len(log.removed) == 2
        rendered(log, 50)


def test_a_long_added_list_shows_its_first_entries_and_the_total():
    metrics = [MetricFactory() for _ in range(3)]
    log = release_changelog(release_with("1.0.0", metrics))
    keys = sorted(m.key for m in metrics)
    for shown, listed in ((None, 3), (0, 3), (2, 2), (3, 3), (5, 3)):
        html = rendered(log, shown)
        assert [key for key in keys if f"<code>{key}</code>" in html] == keys[:listed], shown
        assert ("and 3 in all" in html) == (listed < 3), shown
