"""Assembling, comparing and publishing releases.

Every write refuses a published release; the database triggers in `db_guards` back this up.

Two workflows here need what apps above the registry know, and take it as an argument from the
floor that sees them (docs/layout.md, "How apps tell each other things"): assembly, the
contested metrics a maintainer kept (the review app's decisions); publication, the freezes of
what the release's figures count (the rubrics' criteria, the results' expert figures).
"""

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

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
    version_ids_needing_mapping,
)
from .changelog import release_changelog_store

# Freezes what an upper app's figures of the release count, in the publishing transaction, and
# answers with warnings for the maintainer (empty when all is well); raising aborts it.
ReleaseFreeze = Callable[..., list[str]]  # freeze(release=release)
# Links other apps offer for a release: {"label", "url", "format"} each.
ReleaseDownloads = Callable[..., list[dict[str, Any]]]  # downloads(release=release)


def _release_lock_draft(release: Release) -> Release:
    """Re-read the release under a row lock and refuse if it is already published."""
    locked = Release.objects.select_for_update().get(pk=release.pk)
    if locked.is_published:
        raise ApplicationError(
            _(
                "Release %(locked_version)s is published and cannot change; "
                "create a new release (for example a patch version) instead."
            )
            % {"locked_version": locked.version}
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
            _(
                '"%(version)s" is not a semantic version: use MAJOR.MINOR.PATCH, '
                "for example 1.2.0 (each part at most %(max_version_part)s)."
            )
            % {"version": version, "max_version_part": MAX_VERSION_PART}
        )
    if Release.objects.filter(version=version).exists():
        raise ApplicationError(
            _("Release %(version)s already exists; choose another version.") % {"version": version}
        )
    title = (title or "").strip()
    if not title:
        raise ApplicationError(_("Give the release a title."))
    return Release.objects.create(
        version=version, title=title, notes=(notes or "").strip(), created_by=created_by
    )


@transaction.atomic
def release_update(*, release: Release, title: str, notes: str = "") -> Release:
    release = _release_lock_draft(release)
    title = (title or "").strip()
    if not title:
        raise ApplicationError(_("Give the release a title."))
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
                _(
                    "Two versions of %(metric_key)s were chosen; a release holds one "
                    "version of each metric."
                )
                % {"metric_key": version.metric.key}
            )
        by_metric[version.metric_id] = version
    unmapped = version_ids_needing_mapping([v.pk for v in by_metric.values()])
    if unmapped:
        keys = sorted(v.metric.key for v in by_metric.values() if v.pk in unmapped)
        raise ApplicationError(
            _(
                "%(items)s still need mapping onto subareas and a label "
                "category; a researcher must complete them (see the metrics "
                "needing mapping) before they can enter a release."
            )
            % {"items": ", ".join(keys)}
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
    *,
    include_statuses: tuple[str, ...] = (ValidationStatus.VALIDATED,),
    contested_kept: Collection[int] = frozenset(),
) -> ReleaseAssembly:
    """The current versions an assembly adds, and every other live one with the reason it is
    left out (so a metric accepted but still under review is not silently missing).

    Contested metrics are held back whatever `include_statuses` says, except those a maintainer
    kept with a written reason (`contested_kept`: their metric ids, which the review app
    holds); kept ones are added.
    """
    unknown = set(include_statuses) - set(ValidationStatus.values)
    if unknown:
        raise ApplicationError(
            _("Unknown validation status: %(items)s.") % {"items": ", ".join(sorted(unknown))}
        )
    statuses = set(include_statuses) - {ValidationStatus.CONTESTED}
    kept = set(contested_kept)
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
    release: Release,
    *,
    include_statuses: tuple[str, ...] = (ValidationStatus.VALIDATED,),
    contested_kept: Collection[int] = frozenset(),
) -> int:
    """Add the current version of every metric `release_assembly` would add."""
    assembly = release_assembly(include_statuses=include_statuses, contested_kept=contested_kept)
    return release_add_versions(release=release, versions=assembly.versions)


@transaction.atomic
def release_publish(
    release: Release,
    *,
    published_by: AbstractBaseUser | None,
    freezes: Sequence[ReleaseFreeze] = (),
) -> Release:
    """Freeze the release. From here on neither services nor the database accept changes.

    `freezes` record, in the same transaction, what the upper apps' figures of the release
    count (`results.services.releases.RELEASE_FREEZES`); what they freeze may call for a
    maintainer's attention (say, an empty rubric while rubric items exist): their warnings are
    left on `release.publish_warnings`.
    """
    release = _release_lock_draft(release)
    if not release.items.exists():
        raise ApplicationError(
            _("Release %(release_version)s has no metrics; add metric versions before publishing.")
            % {"release_version": release.version}
        )
    retired = list(
        release.items.filter(metric__validation_status=ValidationStatus.RETIRED).values_list(
            "metric__key", flat=True
        )
    )
    if retired:
        raise ApplicationError(
            _("Retired metrics cannot be published: remove %(items)s first.")
            % {"items": ", ".join(retired)}
        )
    release.status = ReleaseStatus.PUBLISHED
    release.published_at = timezone.now()
    release.published_by = published_by
    release.save(update_fields=["status", "published_at", "published_by"])
    # Frozen from here, so what it changed against the previous release is computed once.
    release_changelog_store(release)
    # In the same transaction: what the release's figures count is frozen with it.
    release.publish_warnings = [w for freeze in freezes for w in freeze(release=release)]
    return release


@transaction.atomic
def release_delete_draft(*, release: Release) -> None:
    release = _release_lock_draft(release)
    release.items.all().delete()
    release.delete()
