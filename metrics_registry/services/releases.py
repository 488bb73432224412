"""Assembling, comparing and publishing releases.

Every write refuses a published release; the database triggers in `db_guards` back this up.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core import events
from core.exceptions import ApplicationError

from ..models import (
    MAX_VERSION_PART,
    Metric,
    MetricVersion,
    Release,
    ReleaseItem,
    ReleaseStatus,
    ValidationStatus,
    parse_semver,
)
from ..selectors import (
    metric_version_list_current,
    release_previous_published,
    version_ids_needing_mapping,
)


def _release_lock_draft(release: Release) -> Release:
    """Re-read the release under a row lock and refuse if it is already published."""
    locked = Release.objects.select_for_update().get(pk=release.pk)
    if locked.is_published:
        raise ApplicationError(
            f"Release {locked.version} is published and cannot change; "
            "create a new release (for example a patch version) instead."
        )
    return locked


@transaction.atomic
def release_create(
    *,
    version: str,
    title: str,
    notes: str = "",
    created_by: AbstractBaseUser | None,
) -> Release:
    version = (version or "").strip()
    if parse_semver(version) is None:
        raise ApplicationError(
            f'"{version}" is not a semantic version: use MAJOR.MINOR.PATCH, for example 1.2.0 '
            f"(each part at most {MAX_VERSION_PART})."
        )
    if Release.objects.filter(version=version).exists():
        raise ApplicationError(f"Release {version} already exists; choose another version.")
    title = (title or "").strip()
    if not title:
        raise ApplicationError("Give the release a title.")
    return Release.objects.create(
        version=version, title=title, notes=(notes or "").strip(), created_by=created_by
    )


@transaction.atomic
def release_update(*, release: Release, title: str, notes: str = "") -> Release:
    release = _release_lock_draft(release)
    title = (title or "").strip()
    if not title:
        raise ApplicationError("Give the release a title.")
    release.title = title
    release.notes = (notes or "").strip()
    release.save(update_fields=["title", "notes"])
    return release


@transaction.atomic
def release_add_versions(*, release: Release, versions: Iterable[MetricVersion]) -> int:
    """Put `versions` in the release, replacing any other version of the same metric.

    Returns how many items were added or switched to another version.
    """
    release = _release_lock_draft(release)
    by_metric: dict[int, MetricVersion] = {}
    for version in versions:
        if version.metric_id in by_metric and by_metric[version.metric_id].pk != version.pk:
            raise ApplicationError(
                f"Two versions of {version.metric.key} were chosen; a release holds one version "
                "of each metric."
            )
        by_metric[version.metric_id] = version
    unmapped = version_ids_needing_mapping([v.pk for v in by_metric.values()])
    if unmapped:
        keys = sorted(v.metric.key for v in by_metric.values() if v.pk in unmapped)
        raise ApplicationError(
            f"{', '.join(keys)} still need mapping onto subareas and a label category; "
            "a researcher must complete them (see the metrics needing mapping) before they can "
            "enter a release."
        )
    existing = {item.metric_id: item for item in release.items.all()}
    changed = 0
    for metric_id, version in by_metric.items():
        item = existing.get(metric_id)
        if item is None:
            ReleaseItem.objects.create(release=release, metric_id=metric_id, metric_version=version)
            changed += 1
        elif item.metric_version_id != version.pk:
            item.metric_version = version
            item.save(update_fields=["metric_version"])
            changed += 1
    return changed


@transaction.atomic
def release_remove_versions(*, release: Release, metrics: Iterable[Metric | MetricVersion]) -> int:
    """Take metrics out of the release (a metric or any of its versions names it)."""
    release = _release_lock_draft(release)
    metric_ids = {obj.metric_id if isinstance(obj, MetricVersion) else obj.pk for obj in metrics}
    deleted, _ = release.items.filter(metric_id__in=metric_ids).delete()
    return deleted


@dataclass(frozen=True)
class LeftOut:
    """A current version that "Add all validated current versions" does not add, and why."""

    version: MetricVersion
    reason: str


@dataclass(frozen=True)
class ReleaseAssembly:
    versions: list[MetricVersion]
    left_out: list[LeftOut]


def release_assembly(
    *, include_statuses: tuple[str, ...] = (ValidationStatus.VALIDATED,)
) -> ReleaseAssembly:
    """The current versions an assembly adds, and every other live one with the reason it is
    left out (so a metric accepted but still under review is not silently missing).

    Contested metrics are held back whatever `include_statuses` says, except those a maintainer
    kept with a written reason (answers to `core.events.CONTESTED_KEPT`); kept ones are added.
    """
    unknown = set(include_statuses) - set(ValidationStatus.values)
    if unknown:
        raise ApplicationError(f"Unknown validation status: {', '.join(sorted(unknown))}.")
    statuses = set(include_statuses) - {ValidationStatus.CONTESTED}
    kept = _contested_metric_ids_kept()
    current = list(
        metric_version_list_current()
        .exclude(metric__validation_status=ValidationStatus.RETIRED)
        .order_by("metric__key")
    )
    # Metrics still needing mapping wait for a researcher; they are not an error here.
    unmapped = version_ids_needing_mapping([v.pk for v in current])
    versions, left_out = [], []
    for version in current:
        status = version.metric.validation_status
        if status == ValidationStatus.CONTESTED and version.metric_id not in kept:
            reason = "Contested: experts disagree and no maintainer has kept it with a reason."
        elif status != ValidationStatus.CONTESTED and status not in statuses:
            shown = version.metric.get_validation_status_display()
            reason = f"{shown}: not validated yet; validate it on its metric page."
        elif version.pk in unmapped:
            reason = "Needs mapping: a researcher has not yet given it subareas and a label."
        else:
            versions.append(version)
            continue
        left_out.append(LeftOut(version=version, reason=reason))
    return ReleaseAssembly(versions=versions, left_out=left_out)


@transaction.atomic
def release_assemble_from_current(
    release: Release, *, include_statuses: tuple[str, ...] = (ValidationStatus.VALIDATED,)
) -> int:
    """Add the current version of every metric `release_assembly` would add."""
    assembly = release_assembly(include_statuses=include_statuses)
    return release_add_versions(release=release, versions=assembly.versions)


@transaction.atomic
def release_publish(release: Release, *, published_by: AbstractBaseUser | None) -> Release:
    """Freeze the release. From here on neither services nor the database accept changes.

    What the other apps freeze with it may call for a maintainer's attention (say, an empty
    rubric while rubric items exist): their warnings are left on `release.publish_warnings`.
    """
    release = _release_lock_draft(release)
    if not release.items.exists():
        raise ApplicationError(
            f"Release {release.version} has no metrics; add metric versions before publishing."
        )
    retired = list(
        release.items.filter(metric__validation_status=ValidationStatus.RETIRED).values_list(
            "metric__key", flat=True
        )
    )
    if retired:
        raise ApplicationError(
            f"Retired metrics cannot be published: remove {', '.join(retired)} first."
        )
    release.status = ReleaseStatus.PUBLISHED
    release.published_at = timezone.now()
    release.published_by = published_by
    release.save(update_fields=["status", "published_at", "published_by"])
    # In the same transaction: what the release's figures count is frozen with it.
    release.publish_warnings = events.collect_flat(events.RELEASE_PUBLISHING, release=release)
    return release


@transaction.atomic
def release_delete_draft(*, release: Release) -> None:
    release = _release_lock_draft(release)
    release.items.all().delete()
    release.delete()


# --- Changelog ---------------------------------------------------------------------------------

CHANGELOG_FIELDS = (
    ("name", "name"),
    ("criterion", "criterion"),
    ("polarity", "polarity"),
    ("label_category_id", "label category"),
    ("rubric_notes", "rubric notes"),
    ("failure_condition", "failure condition"),
    ("age_contexts", "age contexts"),
)


@dataclass(frozen=True)
class ListedMetric:
    pk: int
    key: str
    validation_status: str


@dataclass(frozen=True)
class ListedVersion:
    """What an added or removed entry shows of a version: read as tuples, since a first
    release lists every one of its ~800 metrics and model objects would cost ten times more."""

    pk: int
    number: int
    name: str
    metric: ListedMetric


@dataclass(frozen=True)
class ChangedMetric:
    metric: Metric
    old_version: MetricVersion
    new_version: MetricVersion
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


def metric_version_changed_fields(old: MetricVersion, new: MetricVersion) -> list[str]:
    """Human names of the content fields that differ between two versions."""
    changed = [
        label for attr, label in CHANGELOG_FIELDS if getattr(old, attr) != getattr(new, attr)
    ]
    if {s.pk for s in old.subareas.all()} != {s.pk for s in new.subareas.all()}:
        changed.append("subareas")
    return changed


# What a listed (added or removed) version shows and the API names it by.
LISTED_FIELDS = ("number", "name", "metric_id", "metric__key", "metric__validation_status")


def _release_version_ids(release: Release) -> dict[int, int]:
    """Metric id → version id of every item, in metric key order (tuples, no model objects)."""
    return dict(release.items.order_by("metric__key").values_list("metric_id", "metric_version_id"))


def release_changelog(release: Release) -> Changelog:
    """What changed since the previous published release (by semantic version order).

    Items are compared as id pairs; only the versions the changelog names are loaded, and
    subareas only for changed ones: a full release holds ~800 metrics, mostly unchanged.
    """
    previous = release_previous_published(release)
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
    # Added and removed entries show a version's number and name only; a changed pair is
    # compared field by field, so its rows come whole, with their subareas.
    listed = [*added, *removed]
    versions: dict[int, Any] = {
        pk: ListedVersion(pk, number, name, ListedMetric(metric_id, key, status))
        for pk, number, name, metric_id, key, status in MetricVersion.objects.filter(
            pk__in=listed
        ).values_list("pk", *LISTED_FIELDS)
    }
    compared = [version_id for pair in changed for version_id in pair]
    if compared:
        versions |= (
            MetricVersion.objects.select_related("metric")
            .prefetch_related("subareas")
            .in_bulk(compared)
        )
    log.added = [versions[version_id] for version_id in added]
    for old_id, new_id in changed:
        old, new = versions[old_id], versions[new_id]
        log.changed.append(
            ChangedMetric(
                metric=new.metric,
                old_version=old,
                new_version=new,
                fields=metric_version_changed_fields(old, new),
            )
        )
    for version_id in removed:
        old = versions[version_id]
        log.removed.append(
            RemovedMetric(
                metric=old.metric,
                old_version=old,
                retired=old.metric.validation_status == ValidationStatus.RETIRED,
            )
        )
    return log


def _contested_metric_ids_kept() -> set[int]:
    """Contested metrics some app decided to keep in new releases (the review app answers)."""
    kept: set[int] = set()
    for ids in events.collect(events.CONTESTED_KEPT):
        kept.update(ids)
    return kept
