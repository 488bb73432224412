import re

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE, LANGUAGE_TAG_MAX_LENGTH, validate_language_tag


class Area(models.Model):
    """One of the three domains of human outcomes. Slugs are stable identifiers used in URLs."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class Subarea(models.Model):
    """One of the fourteen subareas; each belongs to exactly one area."""

    area = models.ForeignKey(Area, on_delete=models.PROTECT, related_name="subareas")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["area__position", "position", "name"]

    def __str__(self) -> str:
        return self.name


class Polarity(models.TextChoices):
    POSITIVE = "positive", _("Positive (behaviour to promote)")
    NEGATIVE = "negative", _("Negative (behaviour to avoid)")


class LabelCategory(models.Model):
    """A line of the AI Nutrition Label: a harm avoided or a benefit promoted.

    Rows come from a data migration; slugs are stable because labels and exports refer to them.
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    polarity = models.CharField(max_length=8, choices=Polarity.choices)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["polarity", "position", "name"]
        verbose_name_plural = "label categories"

    def __str__(self) -> str:
        return self.name


class Benchmark(models.Model):
    """An existing benchmark or harm taxonomy whose items were standardised into metrics."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    citation = models.TextField(blank=True)
    url = models.URLField(blank=True)
    description = models.TextField(blank=True)
    license = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class KeyCounter(models.Model):
    """Monotonic counters for public identifiers; a deleted metric never frees its key."""

    name = models.CharField(max_length=32, unique=True)
    last_value = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name}={self.last_value}"


class ValidationStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    UNDER_REVIEW = "under_review", _("Under review")
    VALIDATED = "validated", _("Validated")
    CONTESTED = "contested", _("Contested")
    RETIRED = "retired", _("Retired")


class SourceKind(models.TextChoices):
    EXPERT_SUBMISSION = "expert_submission", "Expert submission"
    BENCHMARK = "benchmark", "Existing benchmark or harm taxonomy"


class AgeContexts(models.TextChoices):
    TEEN = "teen", "Teens (13–17)"
    ADULT = "adult", "Adults (18+)"
    BOTH = "both", "Teens and adults"


class MetricQuerySet(models.QuerySet):
    def visible_to_public(self) -> "MetricQuerySet":
        # Drafts are still being written; everything else, retired included, stays traceable.
        return self.exclude(validation_status=ValidationStatus.DRAFT)


class Metric(models.Model):
    """The stable identity of a metric; its content lives in immutable `MetricVersion` rows."""

    key = models.CharField(max_length=16, unique=True, editable=False)
    validation_status = models.CharField(
        max_length=16,
        choices=ValidationStatus.choices,
        default=ValidationStatus.UNDER_REVIEW,
        db_index=True,
    )
    source_kind = models.CharField(max_length=20, choices=SourceKind.choices)
    contributor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="contributed_metrics",
    )
    # Public credit uses the name the contributor chose, never their account name or email.
    credit_name = models.CharField(max_length=200, blank=True)
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.PROTECT, related_name="metrics"
    )
    source_reference = models.TextField(blank=True)
    source_weight = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="The weight the source benchmark gives this item (its own scoring weights); "
        "used by the weighting sensitivity analysis. Blank: the source gives none.",
    )
    # Denormalised pointer kept by the services so lists can filter on current content in SQL.
    current_version = models.ForeignKey(
        "MetricVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MetricQuerySet.as_manager()

    class Meta:
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(source_kind="benchmark") | models.Q(benchmark__isnull=False),
                name="metric_benchmark_source_has_benchmark",
            ),
        ]

    def __str__(self) -> str:
        return self.key


class MetricStatusChange(models.Model):
    """One step of a metric's validation history."""

    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=16, choices=ValidationStatus.choices, blank=True)
    to_status = models.CharField(max_length=16, choices=ValidationStatus.choices)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["changed_at", "id"]

    def __str__(self) -> str:
        return f"{self.metric}: {self.from_status or '—'} → {self.to_status}"


class MetricVersion(models.Model):
    """The content of a metric at one point in time. Never updated: a change is a new version.

    Besides `save()` refusing updates, database triggers reject UPDATEs of content columns
    (migration 0005), so a published release keeps meaning exactly what it meant.
    """

    CONTENT_FIELDS = (
        "name",
        "criterion",
        "polarity",
        "label_category",
        "subareas",
        "rubric_notes",
        "failure_condition",
        "age_contexts",
        "language",
    )

    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    criterion = models.TextField(help_text="One observable assistant behaviour.")
    polarity = models.CharField(max_length=8, choices=Polarity.choices)
    subareas = models.ManyToManyField(Subarea, related_name="metric_versions")
    # Blank only for an imported metric that still needs mapping onto the taxonomy; such a
    # version cannot enter a release (services refuse it).
    label_category = models.ForeignKey(
        LabelCategory,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="metric_versions",
    )
    rubric_notes = models.TextField(blank=True)
    failure_condition = models.TextField(blank=True)
    age_contexts = models.CharField(
        max_length=5, choices=AgeContexts.choices, default=AgeContexts.BOTH
    )
    language = models.CharField(
        max_length=LANGUAGE_TAG_MAX_LENGTH,
        default=DEFAULT_LANGUAGE,
        validators=[validate_language_tag],
        help_text="BCP 47 tag of the name and criterion, e.g. en, es, pt-BR.",
    )
    change_note = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["metric", "number"]
        constraints = [
            models.UniqueConstraint(fields=["metric", "number"], name="metric_version_unique"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="metric_version_gte_1"),
        ]

    def __str__(self) -> str:
        return f"{self.metric_id and self.metric.key} v{self.number}: {self.name}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ApplicationError(
                "A metric version cannot be changed once created; create a new version instead."
            )
        super().save(*args, **kwargs)

    @property
    def needs_mapping(self) -> bool:
        """Imported without a label category or subareas: a researcher must map it first."""
        return self.label_category_id is None or not self.subareas.exists()


SEMVER_RE = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
semver_validator = RegexValidator(
    SEMVER_RE, "Use a semantic version MAJOR.MINOR.PATCH, for example 1.2.0."
)


class ReleaseStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", "Published"


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
