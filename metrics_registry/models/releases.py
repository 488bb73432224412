"""Releases: named sets of metric versions, frozen once published, with their changelog."""

import re

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from .metrics import Metric, MetricVersion

SEMVER_RE = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
semver_validator = RegexValidator(
    SEMVER_RE, "Use a semantic version MAJOR.MINOR.PATCH, for example 1.2.0."
)


class ReleaseStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")


class ReleaseQuerySet(models.QuerySet):
    def published(self) -> "ReleaseQuerySet":
        return self.filter(status=ReleaseStatus.PUBLISHED)

    def by_version(self) -> "ReleaseQuerySet":
        return self.order_by("major", "minor", "patch")


class Release(models.Model):
    """A named, immutable-once-published set of metric versions."""

    version = models.CharField(max_length=32, unique=True, validators=[semver_validator])
    synthetic = models.BooleanField(
        default=False,
        help_text="Generated for load tests and benchmarks (generate_synthetic_dataset): "
        "not results of any real model.",
    )
    # Numeric parts of `version`, so releases sort as 1.10.0 > 1.9.0 in SQL.
    major = models.PositiveIntegerField(editable=False, default=0)
    minor = models.PositiveIntegerField(editable=False, default=0)
    patch = models.PositiveIntegerField(editable=False, default=0)
    title = models.CharField(max_length=200)
    notes = models.TextField(blank=True)
    status = models.CharField(
        max_length=10, choices=ReleaseStatus.choices, default=ReleaseStatus.DRAFT, db_index=True
    )
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["-major", "-minor", "-patch"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status="published") | models.Q(published_at__isnull=False),
                name="release_published_has_date",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version} — {self.title}"

    def save(self, *args, **kwargs) -> None:
        # Derived sort keys, not a workflow: they must always agree with `version`.
        parts = parse_semver(self.version)
        if parts is not None:
            self.major, self.minor, self.patch = parts
        super().save(*args, **kwargs)

    @property
    def is_published(self) -> bool:
        return self.status == ReleaseStatus.PUBLISHED

    @property
    def semver(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)


# The largest value the database's integer columns (major, minor, patch) hold.
MAX_VERSION_PART = 2_147_483_647


def parse_semver(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch), or None when not MAJOR.MINOR.PATCH or a part is out of range."""
    match = re.match(SEMVER_RE, version or "")
    if match is None:
        return None
    parts = tuple(int(part) for part in match.groups())
    if any(part > MAX_VERSION_PART for part in parts):
        return None
    return parts  # type: ignore[return-value]


class ReleaseItem(models.Model):
    """One metric version in a release; a release holds at most one version of each metric."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="items")
    # Copied from metric_version.metric so the database can enforce one version per metric.
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="release_items")
    metric_version = models.ForeignKey(
        MetricVersion, on_delete=models.PROTECT, related_name="release_items"
    )

    class Meta:
        ordering = ["metric__key"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "metric"], name="release_item_one_per_metric"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.release.version}: {self.metric_version}"


class ReleaseChangelog(models.Model):
    """The changelog of a published release, computed once when it is published.

    A published release and its versions are frozen, so what changed against the previous
    release is too; only publishing a lower version later changes which release is previous,
    and `previous` records the one compared against so a reader can tell. Derived data, kept
    apart from `Release` so that loading a release never drags ~800 entries along.
    """

    release = models.OneToOneField(
        Release, primary_key=True, on_delete=models.CASCADE, related_name="stored_changelog"
    )
    previous = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Rows of plain values (see `services.changelog`), with the layout's number under "format".
    entries = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Changelog of release {self.release_id}"
