"""Scenarios: the test situations of a metric version, one per base situation × age context."""

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.countries import COUNTRY_CODE_LENGTH, validate_country_code
from core.languages import (
    DEFAULT_LANGUAGE,
    LANGUAGE_TAG_MAX_LENGTH,
    TranslationProvenance,
    validate_language_tag,
)
from core.models import TimeStampedModel

SCENARIO_BASE_COUNT = 3
TEEN_AGES = (13, 17)
ADULT_MIN_AGE = 18


class AgeContext(models.TextChoices):
    TEEN = "teen", _("Teen (13–17)")
    ADULT = "adult", _("Adult (18+)")


class ScenarioStatus(models.TextChoices):
    ACTIVE = "active", pgettext_lazy("scenario status", "Active")
    RETIRED = "retired", pgettext_lazy("scenario status", "Retired")
    # The situation of imported transcripts that name no scenario: unknown, judged on the
    # metric's rubric alone; never simulated, never curated.
    IMPORTED = "imported", pgettext_lazy("scenario status", "Situation unknown (imported)")


class ScenarioQuerySet(models.QuerySet):
    def active(self) -> "ScenarioQuerySet":
        return self.filter(status=ScenarioStatus.ACTIVE)

    def awaiting_translation_review(self) -> "ScenarioQuerySet":
        return self.filter(translation_provenance=TranslationProvenance.MACHINE)

    def runnable(self) -> "ScenarioQuerySet":
        """Scenarios a run may simulate: a machine translation nobody who reads its language
        has reviewed could test the translation instead of the behaviour."""
        return self.exclude(translation_provenance=TranslationProvenance.MACHINE)

    def expanded(self) -> "ScenarioQuerySet":
        return self.filter(expanded_at__isnull=False)


class Scenario(TimeStampedModel):
    """One of the six test situations of a metric version: a base situation × an age context.

    Rows are created in two steps: the base situation (first writer call) and the expansion
    into persona, goals and anchors (second call), so an interrupted generation resumes at the
    variant it stopped on. `expanded_at` is null until the second step is done.
    """

    metric_version = models.ForeignKey(
        "metrics_registry.MetricVersion", on_delete=models.PROTECT, related_name="scenarios"
    )
    base_index = models.PositiveSmallIntegerField(
        validators=[MaxValueValidator(SCENARIO_BASE_COUNT - 1)]
    )
    age_context = models.CharField(max_length=5, choices=AgeContext.choices)
    base_situation = models.TextField(help_text="The situation shared by the teen and adult form.")
    situation = models.TextField(help_text="The situation adapted to this age context.")
    persona = models.JSONField(
        default=dict,
        blank=True,
        help_text="name, age, gender, background and other_attributes (a mapping).",
    )
    user_goal = models.TextField(blank=True)
    latent_adversarial_goal = models.TextField(blank=True)
    anchors = models.JSONField(
        default=list, blank=True, help_text='A list of {"turn": n, "text": "..."}, by turn.'
    )
    failure_condition = models.TextField(blank=True)
    status = models.CharField(
        max_length=8, choices=ScenarioStatus.choices, default=ScenarioStatus.ACTIVE, db_index=True
    )
    expanded_at = models.DateTimeField(null=True, blank=True)
    generation = models.PositiveSmallIntegerField(
        default=0, help_text="0 for the first generation, +1 per regeneration (varies the seed)."
    )
    generated_call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    retired_at = models.DateTimeField(null=True, blank=True)
    language = models.CharField(
        max_length=LANGUAGE_TAG_MAX_LENGTH,
        default=DEFAULT_LANGUAGE,
        validators=[validate_language_tag],
        help_text="BCP 47 tag of the situation, persona and goals, e.g. en, es, pt-BR.",
    )
    translation_provenance = models.CharField(
        max_length=16,
        choices=TranslationProvenance.choices,
        default=TranslationProvenance.NATIVE,
    )
    translation_reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    translation_reviewed_at = models.DateTimeField(null=True, blank=True)
    country = models.CharField(
        max_length=COUNTRY_CODE_LENGTH,
        blank=True,
        validators=[validate_country_code],
        help_text=_(
            "ISO 3166-1 alpha-2 code of where the persona lives, e.g. ES; blank when the "
            "situation is set nowhere in particular. The target is told it, as a deployed "
            "service knows its user's region."
        ),
    )

    objects = ScenarioQuerySet.as_manager()

    class Meta:
        ordering = ["metric_version", "base_index", "-age_context", "-created_at"]
        constraints = [
            # One active scenario per situation, age and language: the same base situation in
            # another language is a variant of it, so results can pair the two.
            models.UniqueConstraint(
                fields=["metric_version", "base_index", "age_context", "language"],
                condition=Q(status="active"),
                name="scenario_one_active_per_variant",
            ),
            # One "situation unknown" per metric version, age and language, whoever imports.
            models.UniqueConstraint(
                fields=["metric_version", "age_context", "language"],
                condition=Q(status="imported"),
                name="scenario_one_unknown_situation_per_variant",
            ),
            models.CheckConstraint(
                condition=Q(base_index__lte=SCENARIO_BASE_COUNT - 1),
                name="scenario_base_index_range",
            ),
            models.CheckConstraint(
                condition=Q(age_context__in=["teen", "adult"]), name="scenario_age_context_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric_version} · situation {self.base_index + 1} · {self.age_context}"

    @property
    def is_expanded(self) -> bool:
        return self.expanded_at is not None

    @property
    def is_active(self) -> bool:
        return self.status == ScenarioStatus.ACTIVE

    @property
    def is_situation_unknown(self) -> bool:
        return self.status == ScenarioStatus.IMPORTED

    @property
    def label(self) -> str:
        # In English whatever the reader's language: results store it, and a page shows it
        # through `results.stored_words`, which reads these English words.
        with translation.override(None):
            age = self.get_age_context_display().lower()
        if self.is_situation_unknown:
            return f"Situation unknown (imported), {age}"
        return f"Situation {self.base_index + 1}, {age}"
