"""Metrics: a stable identity (`Metric`), its validation history, and its content in
immutable versions (`MetricVersion`)."""

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE, LANGUAGE_TAG_MAX_LENGTH, validate_language_tag

from .taxonomy import Benchmark, LabelCategory, Polarity, Subarea


class ValidationStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    UNDER_REVIEW = "under_review", _("Under review")
    VALIDATED = "validated", _("Validated")
    CONTESTED = "contested", _("Contested")
    RETIRED = "retired", _("Retired")


class SourceKind(models.TextChoices):
    EXPERT_SUBMISSION = "expert_submission", _("Expert submission")
    BENCHMARK = "benchmark", _("Existing benchmark or harm taxonomy")


class AgeContexts(models.TextChoices):
    TEEN = "teen", _("Teens (13–17)")
    ADULT = "adult", _("Adults (18+)")
    BOTH = "both", _("Teens and adults")


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
