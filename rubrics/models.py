"""Rubric items, the second benchmark form: dimensions, items, criteria, release freezes.

The replies to rubric items in runs and their grades are evaluations' rows
(`evaluations.models.RubricResponse`, `RubricGrade`); they point here.
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.countries import COUNTRY_CODE_LENGTH, validate_country_code
from core.languages import DEFAULT_LANGUAGE, LANGUAGE_TAG_MAX_LENGTH, validate_language_tag
from core.models import TimeStampedModel


class RubricDimensionQuerySet(models.QuerySet):
    def choices(self) -> list[tuple[str, str]]:
        """(slug, name) of every dimension, in display order."""
        return list(self.values_list("slug", "name"))

    def label(self, slug: str) -> str:
        """The name of a dimension; an unknown slug is shown as it is stored."""
        return dict(self.choices()).get(slug, slug)


class RubricDimension(models.Model):
    """A behaviour dimension rubric criteria are tagged with: vocabulary kept as data.

    Seeded with MentalHealthBench's ten dimensions and HealthBench's five axes (accuracy is
    shared); a maintainer can add more in the admin without a code change.
    """

    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    frameworks = models.JSONField(
        default=list, blank=True, help_text='Benchmarks using it, e.g. ["HealthBench"].'
    )
    position = models.PositiveSmallIntegerField(default=0)

    objects = RubricDimensionQuerySet.as_manager()

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.name


class CriterionOrigin(models.TextChoices):
    PLATFORM = "platform", _("Written on the platform (counts after expert consensus)")
    PUBLISHED = "published", _("Imported from a published benchmark (validated by its source)")


class Acuity(models.TextChoices):
    NON_ACUTE = "non_acute", pgettext_lazy("acuity", "Non-acute")
    HIGH_ACUITY = "high_acuity", pgettext_lazy("acuity", "High acuity")
    EMERGENCY = "emergency", pgettext_lazy("acuity", "Emergency")


class Population(models.TextChoices):
    ADULT = "adult", pgettext_lazy("population", "Adult")
    TEEN = "teen", pgettext_lazy("population", "Teen")
    CAREGIVER = "caregiver", pgettext_lazy("population", "Caregiver")
    CLINICIAN = "clinician", pgettext_lazy("population", "Clinician")


class RubricItem(TimeStampedModel):
    """A synthetic conversation ending in a user message, graded by an expert-written rubric.

    Acuity, population and language describe the conversation, so they live here; each
    criterion carries its own behaviour dimension (per-dimension scores restrict the rubric).
    """

    key = models.SlugField(
        max_length=100, unique=True, help_text="Stable identifier from the file."
    )
    title = models.CharField(max_length=200, blank=True)
    messages = models.JSONField(
        help_text='[{"role": "user"|"assistant", "content": "..."}], ending with a user message.'
    )
    acuity = models.CharField(
        max_length=12, choices=Acuity.choices, blank=True, db_index=True, help_text="Optional."
    )
    population = models.CharField(
        max_length=10, choices=Population.choices, blank=True, db_index=True, help_text="Optional."
    )
    language = models.CharField(
        max_length=LANGUAGE_TAG_MAX_LENGTH,
        default=DEFAULT_LANGUAGE,
        validators=[validate_language_tag],
        help_text="BCP 47 tag, e.g. en, pt-BR.",
    )
    # Where the user of the conversation is: a criterion about crisis resources is graded
    # against that country's lines ("gave 988" is right in the US, wrong in Spain).
    country = models.CharField(
        max_length=COUNTRY_CODE_LENGTH,
        blank=True,
        validators=[validate_country_code],
        help_text="Optional ISO 3166-1 alpha-2 code of the user's country, e.g. ES.",
    )
    source = models.CharField(max_length=200, blank=True)
    source_format = models.CharField(
        max_length=20, default="impactbench", help_text='"impactbench" or "healthbench".'
    )
    external_id = models.CharField(
        max_length=200, blank=True, help_text="The identifier in the source file (prompt_id)."
    )
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text="Kept from the source row: HealthBench's example_tags (themes, physician "
        "categories) and ideal_completions_data, and any other field it carried.",
    )

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key

    @property
    def final_user_message(self) -> str:
        return str(self.messages[-1].get("content", "")) if self.messages else ""


class CriterionConsensusState(models.TextChoices):
    UNREVIEWED = "unreviewed", _("Awaiting consensus")
    SURVIVED = "survived", _("Survived consensus")
    DROPPED = "dropped", _("Dropped by consensus")


class RubricCriterionQuerySet(models.QuerySet):
    def counting(self) -> "RubricCriterionQuerySet":
        """Criteria that count in scoring: validated by their source or by expert consensus."""
        return self.filter(
            Q(origin=CriterionOrigin.PUBLISHED)
            | Q(consensus_state=CriterionConsensusState.SURVIVED)
        )


class RubricCriterion(models.Model):
    item = models.ForeignKey(RubricItem, on_delete=models.CASCADE, related_name="criteria")
    position = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    points = models.SmallIntegerField(
        validators=[MinValueValidator(-10), MaxValueValidator(10)],
        help_text="−10..+10, not 0: positive rewards, negative penalises.",
    )
    dimension = models.CharField(
        max_length=40, help_text="A RubricDimension slug (checked on import and in forms)."
    )
    tags = models.JSONField(
        default=list, blank=True, help_text='As in the source, e.g. ["level:example", "axis:..."].'
    )
    # A criterion written for one country ("refers the user to 024") names it; blank is the
    # item's country (`evaluations.rubric_prompts.criterion_country`).
    country = models.CharField(
        max_length=COUNTRY_CODE_LENGTH,
        blank=True,
        validators=[validate_country_code],
        help_text="Optional ISO 3166-1 alpha-2 code; blank: the item's country.",
    )
    # A published benchmark's criteria arrive validated by their source and count in scoring
    # without platform consensus.
    origin = models.CharField(
        max_length=10, choices=CriterionOrigin.choices, default=CriterionOrigin.PLATFORM
    )
    consensus_state = models.CharField(
        max_length=10,
        choices=CriterionConsensusState.choices,
        default=CriterionConsensusState.UNREVIEWED,
        help_text="Expert consensus on a criterion written on the platform.",
    )

    objects = RubricCriterionQuerySet.as_manager()

    class Meta:
        ordering = ["item", "position"]
        verbose_name_plural = "rubric criteria"
        constraints = [
            models.CheckConstraint(
                condition=Q(points__gte=-10) & Q(points__lte=10) & ~Q(points=0),
                name="rubric_criterion_points_range_nonzero",
            ),
            models.UniqueConstraint(
                fields=["item", "position"], name="rubric_criterion_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}#{self.position} ({self.points:+d})"

    @property
    def dimension_name(self) -> str:
        return RubricDimension.objects.label(self.dimension)

    @property
    def source_validated(self) -> bool:
        """Imported from a published benchmark: counts without platform consensus."""
        return self.origin == CriterionOrigin.PUBLISHED

    @property
    def counts(self) -> bool:
        return self.source_validated or self.consensus_state == CriterionConsensusState.SURVIVED


class ReleaseRubricFreeze(models.Model):
    """The rubric criteria that counted when a release was published.

    Written once, in the publishing transaction; grading a run of that release counts exactly
    these criteria, so a later consensus review never changes a published release's scores.
    """

    release = models.OneToOneField(
        "metrics_registry.Release", on_delete=models.CASCADE, related_name="rubric_freeze"
    )
    criteria = models.ManyToManyField(RubricCriterion, related_name="+", blank=True)
    frozen_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"criteria counted in release {self.release_id}"
