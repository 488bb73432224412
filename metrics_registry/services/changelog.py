"""What changed in a release against the previous published release, per metric version.

A draft's changelog is computed on every read: its items change. A published release is
frozen (services and database triggers), so its changelog is computed once, in the publish
transaction, and kept as rows of plain values (`ReleaseChangelog`); the release page and its
API twin read it back in two queries whatever the release's size (a full release holds ~800
metrics, and computing their changelog dominated the page on an empty page cache).

The kept changelog names the release it was compared against. Publishing a lower version
later makes that one the previous release of the next one up, so publishing redoes the next
release's changelog too; a reader that still finds the comparison stale, or none kept (a
release published before changelogs were kept), computes it and keeps it.

One thing is frozen at publication on purpose: whether a removed metric was retired is read
when the release is published, not whenever the page is read.
"""

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from ..models import MetricVersion, Release, ReleaseChangelog, ValidationStatus
from ..selectors import release_next_published, release_previous_published

# The layout of the kept rows; a reader recomputes rows of another layout.
CHANGELOG_FORMAT = 1

# Each field's human name is kept in English (the API's words); a page translates it.
CHANGELOG_FIELDS = (
    ("name", gettext_noop("name")),
    ("criterion", gettext_noop("criterion")),
    ("polarity", gettext_noop("polarity")),
    ("label_category_id", gettext_noop("label category")),
    ("rubric_notes", gettext_noop("rubric notes")),
    ("failure_condition", gettext_noop("failure condition")),
    ("age_contexts", gettext_noop("age contexts")),
)
CONTENT_FIELDS = tuple(attr for attr, _ in CHANGELOG_FIELDS)
# What an entry shows of a version and the API names it by (`ListedVersion`'s row).
LISTED_FIELDS = ("number", "name", "metric_id", "metric__key")


@dataclass(frozen=True)
class ListedMetric:
    pk: int
    key: str


@dataclass(frozen=True)
class ListedVersion:
    """What an entry shows of a version: read as tuples, since a first release lists every
    one of its ~800 metrics and model objects would cost ten times more."""

    pk: int
    number: int
    name: str
    metric: ListedMetric

    def as_row(self) -> list[Any]:
        return [self.pk, self.number, self.name, self.metric.pk, self.metric.key]

    @classmethod
    def from_row(cls, row: list[Any] | tuple[Any, ...]) -> "ListedVersion":
        pk, number, name, metric_id, key = row
        return cls(pk, number, name, ListedMetric(metric_id, key))


@dataclass(frozen=True)
class ChangedMetric:
    metric: ListedMetric
    old_version: ListedVersion
    new_version: ListedVersion
    fields: list[str]


@dataclass(frozen=True)
class RemovedMetric:
    metric: ListedMetric
    old_version: ListedVersion
    retired: bool


@dataclass
class Changelog:
    release: Release
    previous: Release | None
    added: list[ListedVersion] = field(default_factory=list)
    changed: list[ChangedMetric] = field(default_factory=list)
    removed: list[RemovedMetric] = field(default_factory=list)
    unchanged_count: int = 0

    @property
    def retired(self) -> list[RemovedMetric]:
        return [entry for entry in self.removed if entry.retired]

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def as_dict(self) -> dict:
        return {
            "release": self.release.version,
            "previous": self.previous.version if self.previous else None,
            "added": [{"key": v.metric.key, "version": v.number} for v in self.added],
            "changed": [
                {
                    "key": c.metric.key,
                    "from_version": c.old_version.number,
                    "to_version": c.new_version.number,
                    "fields": c.fields,
                }
                for c in self.changed
            ],
            "removed": [
                {"key": r.metric.key, "version": r.old_version.number, "retired": r.retired}
                for r in self.removed
            ],
            "unchanged_count": self.unchanged_count,
        }

    def entries(self) -> dict[str, Any]:
        """The kept form: plain rows, without the two releases (the row names them)."""
        return {
            "format": CHANGELOG_FORMAT,
            "added": [version.as_row() for version in self.added],
            "changed": [
                [c.old_version.as_row(), c.new_version.as_row(), c.fields] for c in self.changed
            ],
            "removed": [[r.old_version.as_row(), r.retired] for r in self.removed],
            "unchanged_count": self.unchanged_count,
        }

    @classmethod
    def from_entries(
        cls, release: Release, previous: Release | None, entries: dict[str, Any]
    ) -> "Changelog":
        changed = []
        for old_row, new_row, fields in entries["changed"]:
            old, new = ListedVersion.from_row(old_row), ListedVersion.from_row(new_row)
            changed.append(ChangedMetric(new.metric, old, new, fields))
        removed = []
        for row, retired in entries["removed"]:
            old = ListedVersion.from_row(row)
            removed.append(RemovedMetric(old.metric, old, retired))
        return cls(
            release=release,
            previous=previous,
            added=[ListedVersion.from_row(row) for row in entries["added"]],
            changed=changed,
            removed=removed,
            unchanged_count=entries["unchanged_count"],
        )


def _content_changes(
    old: dict[str, Any], new: dict[str, Any], old_subareas: set[int], new_subareas: set[int]
) -> list[str]:
    changed = [label for attr, label in CHANGELOG_FIELDS if old[attr] != new[attr]]
    if old_subareas != new_subareas:
        changed.append("subareas")
    return changed


def metric_version_changed_fields(old: MetricVersion, new: MetricVersion) -> list[str]:
    """Human names of the content fields that differ between two versions."""
    return _content_changes(
        {attr: getattr(old, attr) for attr in CONTENT_FIELDS},
        {attr: getattr(new, attr) for attr in CONTENT_FIELDS},
        {s.pk for s in old.subareas.all()},
        {s.pk for s in new.subareas.all()},
    )


def _release_version_ids(release: Release) -> dict[int, int]:
    """Metric id → version id of every item, in metric key order (tuples, no model objects)."""
    return dict(release.items.order_by("metric__key").values_list("metric_id", "metric_version_id"))


def _changelog_compute(release: Release, previous: Release | None) -> Changelog:
    """Items are compared as id pairs; only the versions the changelog names are read, as
    tuples, and the content columns and subareas only for changed ones: a full release holds
    ~800 metrics, mostly unchanged."""
    current = _release_version_ids(release)
    before = _release_version_ids(previous) if previous else {}
    log = Changelog(release=release, previous=previous)
    added = [version_id for metric_id, version_id in current.items() if metric_id not in before]
    changed = [
        (before[metric_id], version_id)
        for metric_id, version_id in current.items()
        if metric_id in before and before[metric_id] != version_id
    ]
    removed = [version_id for metric_id, version_id in before.items() if metric_id not in current]
    log.unchanged_count = len(current) - len(added) - len(changed)

    shown = 1 + len(LISTED_FIELDS)
    versions: dict[int, ListedVersion] = {}
    retired: set[int] = set()
    for row in MetricVersion.objects.filter(pk__in=[*added, *removed]).values_list(
        "pk", *LISTED_FIELDS, "metric__validation_status"
    ):
        versions[row[0]] = ListedVersion.from_row(row[:shown])
        if row[shown] == ValidationStatus.RETIRED:
            retired.add(row[0])
    compared = [version_id for pair in changed for version_id in pair]
    content: dict[int, dict[str, Any]] = {}
    subareas: dict[int, set[int]] = {version_id: set() for version_id in compared}
    if compared:
        for row in MetricVersion.objects.filter(pk__in=compared).values_list(
            "pk", *LISTED_FIELDS, *CONTENT_FIELDS
        ):
            versions[row[0]] = ListedVersion.from_row(row[:shown])
            content[row[0]] = dict(zip(CONTENT_FIELDS, row[shown:], strict=True))
        through = MetricVersion.subareas.through.objects
        for version_id, subarea_id in through.filter(metricversion_id__in=compared).values_list(
            "metricversion_id", "subarea_id"
        ):
            subareas[version_id].add(subarea_id)

    log.added = [versions[version_id] for version_id in added]
    for old_id, new_id in changed:
        old, new = versions[old_id], versions[new_id]
        fields = _content_changes(
            content[old_id], content[new_id], subareas[old_id], subareas[new_id]
        )
        log.changed.append(ChangedMetric(new.metric, old, new, fields))
    for version_id in removed:
        old = versions[version_id]
        log.removed.append(RemovedMetric(old.metric, old, version_id in retired))
    return log


def _changelog_keep(log: Changelog) -> Changelog:
    # One upsert: two readers filling in the same missing changelog write the same row.
    ReleaseChangelog.objects.bulk_create(
        [ReleaseChangelog(release=log.release, previous=log.previous, entries=log.entries())],
        update_conflicts=True,
        unique_fields=["release"],
        update_fields=["previous", "entries", "computed_at"],
    )
    return log


@transaction.atomic
def release_changelog_store(release: Release) -> Changelog:
    """Compute and keep the changelog of a release being published (call it in the publish
    transaction, once the release is marked published). The next published release up now
    compares against this one, so its kept changelog is redone as well."""
    log = _changelog_keep(_changelog_compute(release, release_previous_published(release)))
    following = release_next_published(release)
    if following is not None:
        _changelog_keep(_changelog_compute(following, release))
    return log


def release_changelog(release: Release) -> Changelog:
    """What changed since the previous published release (by semantic version order).

    A published release's changelog is read back as kept at publication (two queries, however
    many metrics); a draft's is computed, as it may still change.
    """
    previous = release_previous_published(release)
    if not release.is_published:
        return _changelog_compute(release, previous)
    kept = (
        ReleaseChangelog.objects.filter(release=release)
        .values_list("previous_id", "entries")
        .first()
    )
    if kept is not None:
        previous_id, entries = kept
        if previous_id == (previous.pk if previous else None) and (
            entries.get("format") == CHANGELOG_FORMAT
        ):
            return Changelog.from_entries(release, previous, entries)
    # Published before changelogs were kept, or compared against a release no longer the
    # previous one: computed once more, and kept for the next reader.
    return _changelog_keep(_changelog_compute(release, previous))
